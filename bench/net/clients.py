"""The download clients in the client namespace: nicer fetch, aria2c, curl-h2, and the foreground flow (one curl
HTTP/1.1 download). Their command lines go to logs/clients.log, their output to logs/CLIENT.out."""

import shlex
import shutil
import subprocess
import time

from link import SERVER_IP
from process import die, log

# Link bytes scaled to payload: 1448 of 1514 bytes per full frame.
PAYLOAD = 1448 / 1514


class Clients:
    def __init__(self, link, work, files, nicer, streams, fg_seconds, warmup):
        self.link, self.work, self.files, self.nicer = link, work, files, nicer
        self.streams, self.fg_seconds, self.warmup = streams, fg_seconds, warmup
        self.dir = work / "dl"
        self.logs = work / "logs"

    def command(self, client, set_name):
        """The command line of @p client downloading @p set_name into self.dir."""
        w, k = self.work, self.streams
        nicer_args = {"nicer": ("h2", []), "nicer-nice": ("h2", ["--nice"]),
                      "nicer-srpt": ("h2", ["--order", "srpt"]), "nicer-fifo": ("h2", ["--order", "fifo"]),
                      "nicer-srpt-nghttpd": ("nghttpd", ["--order", "srpt"]),
                      "nicer-fifo-nghttpd": ("nghttpd", ["--order", "fifo"])}
        if client in nicer_args:
            server, extra = nicer_args[client]
            return [self.nicer, "fetch", w / f"{set_name}-{server}.meta4", "--dir", self.dir, "--streams", k,
                    *extra, "--json"]
        if client == "aria2c":
            return ["aria2c", "-M", w / f"{set_name}-h1.meta4", "-d", self.dir, "-j", k, "-x", "1", "-s", "1",
                    "--file-allocation=none", "--enable-http-pipelining=false", "--allow-overwrite=true",
                    "--auto-file-renaming=false", "--summary-interval=0", "--console-log-level=warn",
                    "--download-result=hide"]
        if client == "curl-h2":
            return ["curl", "-s", "--http2", "--cacert", w / "tls/server.pem", "--parallel", "--parallel-max", k,
                    "--fail", "--output-dir", self.dir, "--config", w / f"{set_name}-curl.conf"]
        die(f"unknown client {client}")

    def start(self, client, set_name, background=False):
        """Starts @p client on @p set_name in a fresh download directory; returns the Popen and when it started
        (wall clock, as the files' mtimes)."""
        self.link.quiet_client()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        cmd = [str(a) for a in self.command(client, set_name)]
        with open(self.logs / f"{client}.out", "a") as out, open(self.logs / "clients.log", "a") as errors:
            errors.write(f"$ {shlex.join(cmd)}{' &' if background else ''}\n")
            errors.flush()
            started = time.time()
            return subprocess.Popen(self.link.in_client(*cmd), stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=errors), started

    def run_to_end(self, client, set_name):
        """Runs @p client on @p set_name to completion: (seconds to the last byte written, mean completion
        seconds). The mtimes tell when the bytes landed, leaving out each client's final hash check and exit."""
        process, start = self.start(client, set_name)
        code = process.wait()
        if code != 0:
            die(f"{client} failed on {set_name} (exit {code}); see {self.logs}/clients.log")
        last = max(p.stat().st_mtime_ns for p in self.dir.rglob("*") if p.is_file()) / 1e9 - start
        done = []
        for file, _ in self.files.sets[set_name]:
            path = self.dir / file
            if not path.is_file():
                die(f"{file} missing in {self.dir}: the download failed (see {self.logs})")
            done.append(path.stat().st_mtime_ns / 1e9 - start)
        shutil.rmtree(self.dir)
        return last, sum(done) / len(done)

    def foreground(self):
        """The foreground flow: one curl HTTP/1.1 download for fg_seconds; its bytes per second, or None when
        it moved nothing."""
        done = subprocess.run(self.link.in_client("curl", "-s", "-o", "/dev/null", "--max-time", self.fg_seconds,
                                                  "-w", "%{size_download} %{time_total}",
                                                  f"http://{SERVER_IP}/foreground.bin"),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True)
        try:
            size, seconds = map(float, done.stdout.split())
            return size / seconds
        except (ValueError, ZeroDivisionError):
            log(f"warning: the foreground curl moved nothing (exit {done.returncode})")
            return None

    def contended(self, client):
        """With @p client downloading the bg set in the background, the foreground's bytes per second and the
        background's during the foreground window: the background's is what the interface received less the
        foreground, with the link bytes scaled to payload."""
        process, _ = self.start(client, "bg", background=True)
        time.sleep(self.warmup)
        if process.poll() is not None:
            die(f"{client} ended before the foreground started; see {self.logs}/clients.log")
        before = self.link.rx_bytes()
        fg = self.foreground()
        after = self.link.rx_bytes()
        if process.poll() is not None:
            log(f"warning: {client} finished during the foreground window (more --total-mb?)")
        process.terminate()
        process.wait()
        self.link.quiet_client()
        shutil.rmtree(self.dir)
        return fg, max(0.0, (after - before) / self.fg_seconds * PAYLOAD - (fg or 0))
