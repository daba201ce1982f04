#!/usr/bin/env python3
"""Record real BOINC GUI RPC replies for unit tests.

The GUI RPC protocol (client/gui_rpc_server.cpp, client/gui_rpc_server_ops.cpp, lib/gui_rpc_client.cpp):
a TCP connection to the client's GUI RPC port; each request is
    <boinc_gui_rpc_request>\\n BODY </boinc_gui_rpc_request>\\n \\003
and each reply is
    <boinc_gui_rpc_reply>\\n ... </boinc_gui_rpc_reply>\\n \\003
Authorization is per connection: <auth1/> gives <nonce>N</nonce>; <auth2><nonce_hash>md5(N + password)
</nonce_hash></auth2> gives <authorized/> or <unauthorized/>.

Two uses:

    record.py rpc --port P --password-file D/gui_rpc_auth.cfg [--no-auth] '<get_cc_status/>'
        one request; prints the reply (without the trailing \\003) on stdout.

    record.py all [--out DIR] [--keep]
        the whole recording session behind the files in this directory: starts the local test project
        (../project/boinc_test_project.py) and a fresh `boinc` client in a temp dir on free ports, walks
        it through attach, download, run, upload and report, saves each reply as DIR/NAME.xml, then the
        "CPU is busy" suspension with two `md5sum /dev/zero`. Stops everything it started.

Saved files hold the exact bytes the client sent minus the trailing \\003, except for the substitutions
in sanitize() (host identifiers and the GUI RPC password, should it ever appear).
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT_SCRIPT = os.path.join(HERE, "..", "project", "boinc_test_project.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
END = b"\003"


class GuiRpc:
    """One GUI RPC connection."""

    def __init__(self, port, host="127.0.0.1", timeout=30):
        self.sock = socket.create_connection((host, port), timeout=timeout)

    def close(self):
        self.sock.close()

    def call(self, body):
        """Send one request; return the reply as text, without the trailing \\003."""
        if not body.endswith("\n"):
            body += "\n"
        request = "<boinc_gui_rpc_request>\n%s</boinc_gui_rpc_request>\n" % body
        self.sock.sendall(request.encode() + END)
        data = b""
        while not data.endswith(END):
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("GUI RPC connection closed after %d bytes" % len(data))
            data += chunk
        return data[:-1].decode("latin-1")   # the client declares ISO-8859-1

    def authorize(self, password, wrong=False):
        """auth1 + auth2; returns both replies. wrong=True sends a bad hash on purpose."""
        reply1 = self.call("<auth1/>")
        nonce = re.search(r"<nonce>(.*?)</nonce>", reply1).group(1)
        digest = hashlib.md5((nonce + password).encode()).hexdigest()
        if wrong:
            digest = hashlib.md5(b"not the password").hexdigest()
        reply2 = self.call("<auth2>\n<nonce_hash>%s</nonce_hash>\n</auth2>" % digest)
        return reply1, reply2


# --------------------------------------------------------------------------------------------------
# The recording session


FAKE_CPID = "0123456789abcdef0123456789abcdef"


def sanitize(text, password):
    """Replace what identifies this host or could unlock it; everything else stays byte for byte."""
    if password:
        text = text.replace(password, "fake-gui-rpc-password")
    text = re.sub(r"<host_cpid>[0-9a-f]*</host_cpid>", "<host_cpid>%s</host_cpid>" % FAKE_CPID, text)
    text = re.sub(r"<authenticator>[^<]*</authenticator>", "<authenticator>fake_authenticator</authenticator>", text)
    text = re.sub(r"<ip_addr>[^<]*</ip_addr>", "<ip_addr>192.0.2.1</ip_addr>", text)
    text = re.sub(r"<mac_address>[^<]*</mac_address>", "<mac_address>00:00:5e:00:53:00</mac_address>", text)
    return text


class Session:
    def __init__(self, out_dir, keep):
        self.out_dir = out_dir
        self.keep = keep
        self.work = tempfile.mkdtemp(prefix="nicertest-rec.")
        self.processes = []
        self.password = None
        self.port = None
        self.url = None
        self.saved = []

    def log(self, msg):
        print("record: %s" % msg, file=sys.stderr, flush=True)

    def start(self, args, **kw):
        p = subprocess.Popen(args, **kw)
        self.processes.append(p)
        return p

    def stop_all(self):
        for p in reversed(self.processes):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.keep:
            self.log("files kept in %s" % self.work)
        else:
            shutil.rmtree(self.work, ignore_errors=True)

    def save(self, name, text):
        path = os.path.join(self.out_dir, name)
        with open(path, "w", encoding="latin-1", newline="") as f:
            f.write(sanitize(text, self.password))
        self.saved.append(name)
        self.log("saved %s (%d bytes)" % (name, len(text)))

    def wait(self, what, predicate, timeout=120, interval=0.2):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(interval)
        raise SystemExit("record: timed out waiting for %s" % what)

    def state(self):
        try:
            with open(os.path.join(self.work, "server", "state.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def run(self):
        os.makedirs(os.path.join(self.work, "server"))
        boinc_dir = os.path.join(self.work, "boinc")
        os.makedirs(boinc_dir)

        # The project: one job with a 200 MB input, sent at 25 MB/s so the download can be caught.
        url_file = os.path.join(self.work, "url")
        self.start([PYTHON, PROJECT_SCRIPT, "--dir", os.path.join(self.work, "server"),
                    "--workunits", "1", "--input-bytes", "200000000", "--download-rate", "25000000",
                    "--task-seconds", "20", "--url-file", url_file,
                    "--notice", "Welcome to the nicer test project (a scheduler notice)."],
                   stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.work, "server.log"), "w"))
        self.wait("the project server", lambda: os.path.exists(url_file))
        with open(url_file) as f:
            self.url = f.read().strip()
        subprocess.run([PYTHON, PROJECT_SCRIPT, "prepare-client", "--boinc-dir", boinc_dir,
                        "--url", self.url, "--task-seconds", "20"], check=True, stdout=subprocess.DEVNULL)
        # cc_config.xml but no global_prefs_override.xml: the "-none" reply is recorded first.
        with open(os.path.join(boinc_dir, "cc_config.xml"), "w") as f:
            f.write("<cc_config>\n<options>\n<report_results_immediately/>\n<skip_cpu_benchmarks/>\n"
                    "<no_info_fetch/>\n</options>\n</cc_config>\n")

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.start(["boinc", "--dir", boinc_dir, "--gui_rpc_port", str(self.port)], cwd=boinc_dir,
                   stdout=open(os.path.join(self.work, "client.log"), "w"), stderr=subprocess.STDOUT)
        auth_file = os.path.join(boinc_dir, "gui_rpc_auth.cfg")

        def client_up():
            if not os.path.exists(auth_file) or not open(auth_file).read().strip():
                return False
            try:
                GuiRpc(self.port, timeout=2).close()
                return True
            except OSError:
                return False
        self.wait("the client's GUI RPC port", client_up, timeout=30)
        with open(auth_file) as f:
            self.password = f.read().strip()
        self.log("client %s on port %d, project %s" % (boinc_dir, self.port, self.url))

        # Authorization.
        rpc = GuiRpc(self.port)
        auth1, auth2 = rpc.authorize(self.password)
        self.save("auth1.xml", auth1)
        self.save("auth2-authorized.xml", auth2)
        bad = GuiRpc(self.port)
        self.save("auth2-unauthorized.xml", bad.authorize(self.password, wrong=True)[1])
        bad.close()
        anonymous = GuiRpc(self.port)
        self.save("error-unauthorized.xml", anonymous.call("<get_notices>\n<seqno>0</seqno>\n</get_notices>"))
        anonymous.close()

        # Preferences override: none, set it, read it back.
        self.save("get_global_prefs_override-none.xml", rpc.call("<get_global_prefs_override/>"))
        prefs = ("<global_preferences>\n<run_if_user_active>1</run_if_user_active>\n"
                 "<suspend_cpu_usage>0</suspend_cpu_usage>\n<max_ncpus_pct>100</max_ncpus_pct>\n"
                 "<cpu_usage_limit>100</cpu_usage_limit>\n<disk_max_used_pct>100</disk_max_used_pct>\n"
                 "<work_buf_min_days>0.01</work_buf_min_days>\n"
                 "<work_buf_additional_days>0</work_buf_additional_days>\n</global_preferences>")
        self.save("set_global_prefs_override.xml",
                  rpc.call("<set_global_prefs_override>\n%s\n</set_global_prefs_override>" % prefs))
        self.save("read_global_prefs_override.xml", rpc.call("<read_global_prefs_override/>"))
        self.save("get_global_prefs_override.xml", rpc.call("<get_global_prefs_override/>"))

        # Before attaching.
        self.save("get_cc_status.xml", rpc.call("<get_cc_status/>"))
        self.save("get_results-empty.xml", rpc.call("<get_results>\n<active_only>0</active_only>\n</get_results>"))
        self.save("get_file_transfers-empty.xml", rpc.call("<get_file_transfers/>"))
        self.save("get_project_status-empty.xml", rpc.call("<get_project_status/>"))
        self.save("error-project_detach-unknown.xml",
                  rpc.call("<project_detach>\n<project_url>http://192.0.2.1/none/</project_url>\n</project_detach>"))
        self.save("error-project_attach-missing-url.xml",
                  rpc.call("<project_attach>\n<authenticator>x</authenticator>\n</project_attach>"))
        self.save("error-unrecognized-op.xml", rpc.call("<no_such_operation/>"))

        # Attach.
        self.save("project_attach.xml", rpc.call(
            "<project_attach>\n<project_url>%s</project_url>\n<authenticator>nicertest_authenticator"
            "</authenticator>\n<project_name></project_name>\n</project_attach>" % self.url))
        self.save("project_attach_poll.xml", rpc.call("<project_attach_poll/>"))

        # The download, caught in flight (past 10 %).
        def downloading():
            reply = rpc.call("<get_file_transfers/>")
            m = re.search(r"<bytes_xferred>([0-9.]+)</bytes_xferred>", reply)
            return reply if m and float(m.group(1)) > 20e6 else None
        self.save("get_file_transfers-active.xml", self.wait("a download in progress", downloading))
        self.save("get_project_status.xml", rpc.call("<get_project_status/>"))

        # The task, running with fraction done > 0.
        def running():
            reply = rpc.call("<get_results>\n<active_only>0</active_only>\n</get_results>")
            m = re.search(r"<fraction_done>([0-9.]+)</fraction_done>", reply)
            return reply if m and float(m.group(1)) > 0 and "<active_task_state>1<" in reply else None
        self.save("get_results-running.xml", self.wait("a running task with fraction done > 0", running))
        self.save("get_results-active_only.xml", rpc.call("<get_results>\n<active_only>1</active_only>\n</get_results>"))
        self.save("get_state.xml", rpc.call("<get_state/>"))

        # Upload and report.
        def reported():
            s = self.state()
            return s and any(r.get("status") == "reported" for r in s["results"].values())
        self.wait("the result to be reported", reported, timeout=180, interval=0.5)

        def credited():     # the server saves its state before the client has read the reply
            reply = rpc.call("<get_project_status/>")
            return reply if "<host_total_credit>10.0" in reply else None
        self.save("get_project_status-after-report.xml", self.wait("the report's reply", credited))
        self.save("get_notices.xml", rpc.call("<get_notices>\n<seqno>0</seqno>\n</get_notices>"))
        self.save("get_messages.xml", rpc.call("<get_messages>\n<seqno>0</seqno>\n</get_messages>"))

        # "suspended: CPU is busy" (SUSPEND_REASON_CPU_USAGE = 1024, lib/common_defs.h): default
        # preferences (no override) while two CPU hogs run.
        rpc.call("<set_global_prefs_override>\n</set_global_prefs_override>")     # deletes the file
        rpc.call("<read_global_prefs_override/>")
        hogs = [self.start(["md5sum", "/dev/zero"], stdout=subprocess.DEVNULL) for _ in range(2)]

        def cpu_busy():
            reply = rpc.call("<get_cc_status/>")
            return reply if "<task_suspend_reason>1024</task_suspend_reason>" in reply else None
        try:
            self.save("get_cc_status-suspended-cpu-busy.xml", self.wait("'CPU is busy'", cpu_busy, timeout=120, interval=1))
        finally:
            for p in hogs:
                p.terminate()
                p.wait()
        rpc.call("<quit/>")
        rpc.close()
        self.log("done: %d files in %s" % (len(self.saved), self.out_dir))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    one = sub.add_parser("rpc", help="send one request and print the reply")
    one.add_argument("--port", type=int, required=True)
    one.add_argument("--host", default="127.0.0.1")
    one.add_argument("--password-file", help="the client's gui_rpc_auth.cfg")
    one.add_argument("--no-auth", action="store_true", help="do not authorize first")
    one.add_argument("request", help="request body, e.g. '<get_cc_status/>'")
    every = sub.add_parser("all", help="record the whole session (starts its own project and client)")
    every.add_argument("--out", default=HERE, help="where to write the .xml files (default: this directory)")
    every.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = p.parse_args(argv)

    if args.command == "rpc":
        rpc = GuiRpc(args.port, args.host)
        if not args.no_auth:
            if not args.password_file:
                raise SystemExit("record.py rpc: --password-file is needed (or --no-auth)")
            with open(args.password_file) as f:
                _, reply = rpc.authorize(f.read().strip())
            if "<authorized/>" not in reply:
                raise SystemExit("authorization failed: %s" % reply)
        sys.stdout.write(rpc.call(args.request))
        rpc.close()
        return 0

    for tool in ("boinc", "md5sum"):
        if shutil.which(tool) is None:
            raise SystemExit("record.py all: %s not found" % tool)
    os.makedirs(args.out, exist_ok=True)
    session = Session(os.path.abspath(args.out), args.keep)
    try:
        session.run()
    finally:
        session.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
