"""Part (d): the real BOINC client (Debian's boinc-client) in the client namespace, downloading work units from
the local test project (tests/boinc/project) in the server namespace, with BOINC's defaults or under nicerd,
whose nice rate controller sets BOINC's max_bytes_sec_down."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections import namedtuple

from clients import PAYLOAD
from link import SERVER_IP
from process import die, log, run, stop, succeeds, wait_until
from report import MIB, median

PROJECT_PORT = 8090
RPC_PORT = 31420
AUTHENTICATOR = "nicertest_authenticator"

# One sample a second: the client namespace's received bytes; nicerd's state and limit (nicer's max_down_rate,
# bytes/s; "-" and 0 with BOINC's defaults); the bytes BOINC's downloads have read so far; and the unread bytes
# and receive buffers of BOINC's download connections (sockets()).
Sample = namedtuple("Sample", "time rx state limit boinc_bytes unread buffers")


def cpu_idle_share():
    """The machine's idle CPU share over one second (/proc/stat; iowait counts as idle)."""

    def ticks():
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
        return fields[3] + fields[4], sum(fields)

    idle0, total0 = ticks()
    time.sleep(1)
    idle1, total1 = ticks()
    return (idle1 - idle0) / max(1, total1 - total0)


def wait_quiet_cpu():
    """nicerd holds (freezes) its work, the BOINC client with its transfers, while the user's programs need every
    CPU: another build on the machine would stop BOINC for reasons that have nothing to do with the link. So
    each run waits (up to a minute) for the CPUs to be at least 80% idle; the held column shows what happened
    anyway."""
    for i in range(60):
        if cpu_idle_share() >= 0.8:
            return
        if i % 10 == 0:
            log("(d) waiting for the CPUs to be idle (other load on the machine)")
    log("warning: the CPUs stayed busy for a minute; measuring anyway (see the held column)")


class Boinc:
    def __init__(self, root, link, work, clients, build, tag, fg_seconds, boinc_warmup, bytes_per_second):
        self.root, self.link, self.work, self.clients = root, link, work, clients
        self.build, self.fg_seconds, self.boinc_warmup = build, fg_seconds, boinc_warmup
        self.project = root / "tests/boinc/project/boinc_test_project.py"
        # nicerd's slice: no dash, so not below nicer.slice, which others may use.
        self.slice = f"nicerbench{tag}.slice"
        # Four work units, each larger than BOINC alone at full link speed can move in a run (from its first byte
        # to the end of the foreground window, plus 30 s): no download ends, so no task starts and none uploads.
        seconds = boinc_warmup + fg_seconds + 30
        self.input_bytes = (int(bytes_per_second * seconds / MIB) + 1) * MIB
        # Copies of nicerd and nicer, taken in modes(), so that a rebuild of the build directory during the run
        # changes nothing.
        self.nicerd = work / "bin/nicerd"
        self.nicer = work / "bin/nicer"
        self.started_manager = False
        # What the current run has running.
        self.dir = work / "boinc-run"
        self.server = self.client = self.nicerd_process = self.sampler = None

    def modes(self):
        """defaults, and nicer when nicerd, `nicer boinc` and a systemd user manager are there (this starts one
        when none runs)."""
        nicerd, nicer = self.build / "app/daemon/nicerd", self.build / "app/cli/nicer"
        if not os.access(nicerd, os.X_OK) or not succeeds([nicer, "boinc", "--help"]):
            log(f"(d) no nicerd or no 'nicer boinc' in {self.build} (build the nicerd and nicer targets): "
                "the nicer row is skipped")
            return ["defaults"]
        self.nicerd.parent.mkdir(exist_ok=True)
        shutil.copy2(nicerd, self.nicerd)
        shutil.copy2(nicer, self.nicer)
        manager_log = self.work / "logs/user-manager.log"
        with open(manager_log, "w") as errors:
            done = subprocess.run([self.root / "tests/harness/user-manager.sh", "start"], stdout=subprocess.PIPE,
                                  stderr=errors, text=True, timeout=120)
        if done.returncode != 0:
            log(f"(d) no systemd user manager (see {manager_log}): the nicer row is skipped")
            return ["defaults"]
        # Its stdout is export lines: XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS, for nicerd, nicer and
        # systemctl --user.
        for line in done.stdout.splitlines():
            if line.startswith("export "):
                key, _, value = line.removeprefix("export ").partition("=")
                os.environ[key] = "".join(shlex.split(value))
        self.started_manager = "already reachable" not in manager_log.read_text()
        return ["defaults", "nicer"]

    def version(self):
        return run(["boinc", "--version"]).split(" ")[0].strip()

    # ------------------------------------------------------------------------------------ talking to BOINC
    def rpc(self, *args):
        """boinccmd against the client of the current run, in the client namespace (never hangs on a frozen
        client): the completed process, or None when it timed out."""
        auth = self.dir / "client/gui_rpc_auth.cfg"
        password = auth.read_text().strip() if auth.exists() else ""
        try:
            return subprocess.run(self.link.in_client("boinccmd", "--host", f"localhost:{RPC_PORT}", "--passwd",
                                                      password, *args),
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
        except subprocess.TimeoutExpired:
            return None

    def answers(self):
        auth = self.dir / "client/gui_rpc_auth.cfg"
        if not auth.exists() or auth.stat().st_size == 0:
            return False
        done = self.rpc("--get_cc_status")
        return done is not None and done.returncode == 0

    def nicer_json(self, *args):
        """`nicer ARGS --json` of this run's nicer, or {} while nicerd does not answer."""
        try:
            done = subprocess.run([self.nicer, *args, "--json"], stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, timeout=10)
            return json.loads(done.stdout) if done.returncode == 0 else {}
        except (subprocess.TimeoutExpired, ValueError):
            return {}

    def nicerd_running(self):
        """The nicerd on the session bus is this run's, and its BOINC client answers."""
        if self.nicerd_process.poll() is not None:
            die(f"(d) nicerd ended; see {self.work}/logs/d-nicer-*.log")
        workload = self.nicer_json("status").get("workload", "")
        if isinstance(workload, list):
            workload = " ".join(map(str, workload))
        return str(self.dir / "client") in workload and self.nicer_json("boinc").get("state") == "running"

    def downloads(self, boinc_json):
        return [t for t in boinc_json.get("transfers", []) if not t.get("upload")]

    def downloading(self, mode):
        """At least one of BOINC's downloads moves bytes."""
        if mode == "nicer":
            return any(x.get("state") == "active" and x.get("bytes_done", 0) > 0
                       for x in self.downloads(self.nicer_json("boinc")))
        done = self.rpc("--get_file_transfers")
        return done is not None and "xfer active: yes" in done.stdout

    def sockets(self):
        """BOINC's download connections (to the project's port) in the client namespace: the data the kernel
        has received that the client has not read yet (Recv-Q) and the receive buffers' sizes (skmem rb, grown
        by TCP's receive-buffer autotuning), summed over the connections."""
        unread = buffers = 0
        for line in run(self.link.in_client("ss", "-tnm", f"( dport = :{PROJECT_PORT} )"), check=False).splitlines():
            fields = line.split()
            if fields and fields[0] == "ESTAB":
                unread += int(fields[1])
            found = re.search(r"rb([0-9]+)", line)
            if found:
                buffers += int(found.group(1))
        return unread, buffers

    def sample(self, mode):
        t, rx = time.time(), self.link.rx_bytes()
        if mode == "nicer":
            status = self.nicer_json("boinc")
            state, limit = status.get("state", "-"), status.get("max_down_rate", 0)
            done = sum(x.get("bytes_done", 0) for x in self.downloads(status))
        else:
            state, limit = "-", 0
            transfers = self.rpc("--get_file_transfers")
            done = sum(float(line.split()[1]) for line in (transfers.stdout if transfers else "").splitlines()
                       if line.strip().startswith("bytes_xferred:"))
        return Sample(t, rx, state, limit, done, *self.sockets())

    def sample_every_second(self, mode, trace, samples, stopping):
        with open(trace, "w") as out:
            while not stopping.is_set():
                s = self.sample(mode)
                samples.append(s)
                out.write(" ".join(str(v) for v in s) + "\n")
                out.flush()
                stopping.wait(1)

    # ------------------------------------------------------------------------------------------- one run
    def run(self, mode, rep):
        """One run: the project server, a fresh BOINC client attached to it (defaults: BOINC alone; nicer: under
        nicerd), BOINC's downloads under way for --boinc-warmup seconds, then the foreground. Returns the
        foreground's rate, BOINC's before and during it (bytes/s), nicer's limit at the window's start (the last
        sample before it), median and end, the held polls among the polls in the window, and BOINC's receive
        buffers when the foreground starts (bytes)."""
        logfile = self.work / f"logs/d-{mode}-{rep}.log"
        trace = self.work / f"logs/d-{mode}-{rep}.trace"
        self.link.quiet_client()
        wait_quiet_cpu()
        shutil.rmtree(self.dir, ignore_errors=True)
        for d in ("project", "client", "nicerd/data"):
            (self.dir / d).mkdir(parents=True)
        logs = self.work / "logs"
        with open(logfile, "a") as out:
            # Work units far larger than the run can move: no download ends, so no task starts computing, and
            # the CPUs stay free for the link's work.
            self.server = subprocess.Popen(
                self.link.in_server(sys.executable, self.project, "--host", SERVER_IP, "--port", PROJECT_PORT,
                                    "--dir", self.dir / "project", "--workunits", 4, "--input-bytes",
                                    self.input_bytes, "--input-content", "zeros", "--task-seconds", 3600,
                                    "--url-file", self.dir / "url", "-q"),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out)
            url_file = self.dir / "url"
            wait_until(60, "the project server's start", lambda: url_file.exists() and url_file.stat().st_size,
                       logs)
            url = url_file.read_text().strip()
            if subprocess.run([sys.executable, self.project, "prepare-client", "--boinc-dir", self.dir / "client",
                               "--url", url, "--task-seconds", "3600", "--client-config"],
                              stdin=subprocess.DEVNULL, stdout=out, stderr=out).returncode != 0:
                die(f"(d) prepare-client failed; see {logfile}")
            boinc = ["boinc", "--dir", self.dir / "client", "--gui_rpc_port", RPC_PORT]
            if mode == "nicer":
                if succeeds([self.nicer, "status"]):
                    die(f"(d) another nicerd answers on the session bus "
                        f"({os.environ.get('DBUS_SESSION_BUS_ADDRESS', '')}); stop it first")
                # nicerd in the client namespace (nsenter: only the network namespace; `ip netns exec` would
                # also remount /sys and hide the cgroups), so that it reads that namespace's /proc/net/dev and
                # reaches the client's GUI RPC on its loopback. Its units are started by the user manager, in the
                # host's namespace: the wrapper puts the client into the client namespace.
                state = self.dir / "nicerd"
                env = dict(os.environ, XDG_STATE_HOME=str(state), XDG_CONFIG_HOME=str(state),
                           XDG_DATA_HOME=str(state / "data"))
                self.nicerd_process = subprocess.Popen(
                    [str(a) for a in ["nsenter", f"--net=/run/netns/{self.link.client_ns}", self.nicerd,
                                      "--instances", 1, "--slice", self.slice, "--",
                                      *self.link.in_client(*boinc)]],
                    env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
                wait_until(90, "nicerd's BOINC client answering", self.nicerd_running, logs)
                if not succeeds([self.nicer, "boinc", "attach", url, AUTHENTICATOR], timeout=120, output=out):
                    die(f"(d) nicer boinc attach failed; see {logfile}")
            else:
                self.client = subprocess.Popen(self.link.in_client(*boinc), stdin=subprocess.DEVNULL, stdout=out,
                                               stderr=out)
                wait_until(60, "BOINC answering GUI RPC", self.answers, logs)
                attach = self.rpc("--project_attach", url, AUTHENTICATOR)
                if attach is not None:
                    out.write(attach.stdout + attach.stderr)
                if attach is None or attach.returncode != 0:
                    die(f"(d) the attach failed; see {logfile}")
        attached = time.monotonic()
        wait_until(120, "BOINC's downloads", lambda: self.downloading(mode), logs)
        log(f"(d) rep {rep} {mode}: BOINC downloading {time.monotonic() - attached:.0f} s after the attach; "
            f"foreground in {self.boinc_warmup} s")
        samples, stopping = [], threading.Event()
        self.sampler = (threading.Thread(target=self.sample_every_second, args=(mode, trace, samples, stopping),
                                         daemon=True), stopping)
        self.sampler[0].start()
        time.sleep(self.boinc_warmup - 5)
        t0, b0 = time.time(), self.link.rx_bytes()
        time.sleep(5)
        t1, b1 = time.time(), self.link.rx_bytes()
        fg = self.clients.foreground()
        t2, b2 = time.time(), self.link.rx_bytes()
        if not self.downloading(mode):
            log("warning: BOINC's downloads had stopped by the end of the window")
        self.stop_run()
        # Interface bytes scaled to payload, as in (b); the limits and the held polls from the samples inside
        # the window.
        before = [s for s in samples if s.time < t1]
        inside = [s for s in samples if t1 <= s.time <= t2]
        return {
            "fg": fg,
            "before": (b1 - b0) / (t1 - t0) * PAYLOAD,
            "during": max(0.0, (b2 - b1) / (t2 - t1) * PAYLOAD - (fg or 0)),
            "limit_start": before[-1].limit if before else 0,
            "limit_median": median([s.limit for s in inside]) or 0,
            "limit_end": inside[-1].limit if inside else 0,
            "held": sum(s.state == "held" for s in inside),
            "polls": len(inside),
            "buffers": before[-1].buffers if before else 0,
        }

    def stop_run(self):
        """Stops what the current run has running, gracefully first, and removes its files."""
        if self.sampler:
            thread, stopping = self.sampler
            stopping.set()
            thread.join()
            self.sampler = None
        if self.nicerd_process:
            # On SIGTERM nicerd stops its workload (the BOINC client) and its slice, and puts BOINC's override
            # back.
            stop(self.nicerd_process, grace=30)
            self.nicerd_process = None
            run(["systemctl", "--user", "stop", self.slice], check=False)
        if self.client:
            self.rpc("--quit")
            try:
                self.client.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.client.kill()
                self.client.wait()
            self.client = None
        if self.server:
            stop(self.server)
            self.server = None
        shutil.rmtree(self.dir, ignore_errors=True)

    def close(self):
        """Stops the current run and the user manager if modes() started it."""
        self.stop_run()
        if self.started_manager:
            run([self.root / "tests/harness/user-manager.sh", "stop"], check=False, timeout=120)
            self.started_manager = False
