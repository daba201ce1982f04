"""The user's own programs, each a class of foreground measured by its own yardstick, in one of two
placements:

- beside: in benchfg.slice, a sibling of the work's slice under the user manager, through `systemd-run
  --scope` (as another session's or another user's programs would be, under the same manager);
- outside: in benchsys, a cgroup at the root of the hierarchies, beside the user manager's, as system.slice
  (a system service, a container, another user's session) is: there the work's weight under the user manager
  does not count, only the user manager's as a whole.

The compute, server and wakeup classes can also run as two phases back to back (run_phases): the first few
seconds after the foreground starts next to work that had the machine to itself, then the steady state."""

import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from machine import NCPU, RootCgroup, cgroup_cpu_usec, run, unit_cgroup

FG_SLICE = "benchfg.slice"  # a top-level slice, like nicer.slice and benchbg.slice
FG_ROOT = "benchsys"  # a root-level cgroup, like system.slice


def in_foreground(*args):
    return ["systemd-run", "--user", "--scope", "--quiet", f"--slice={FG_SLICE}", "--", *map(str, args)]


class Beside:
    """The foreground in benchfg.slice under the user manager, beside the work's slice (run.py starts the
    slice and stops it)."""

    key = "beside"
    label = "beside the work (benchfg.slice, under the user manager)"

    def __init__(self):
        self.cgroup = ""
        self.scopes = 0

    def command(self, args):
        return in_foreground(*args)

    def adopt(self, pid):
        """Moves the running process @p pid into benchfg.slice: a transient scope adopting it, as systemd-run
        --scope would have made."""
        self.scopes += 1
        run("busctl", "--user", "call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager", "StartTransientUnit", "ssa(sv)a(sa(sv))",
            f"bench-fg-{os.getpid()}-{self.scopes}.scope", "fail", "2", "PIDs", "au", "1", str(pid), "Slice", "s",
            FG_SLICE, "0")

    def cpu_usec(self):
        if not self.cgroup:
            self.cgroup = unit_cgroup(FG_SLICE)
        return cgroup_cpu_usec(self.cgroup)


class Outside:
    """The foreground in benchsys, a cgroup at the root of every hierarchy that counts the CPU, a sibling of
    the user manager's own (run.py creates it and removes it)."""

    key = "outside"
    label = "outside the user manager (a root-level cgroup, placed as system.slice is)"

    def __init__(self):
        self.root = RootCgroup(FG_ROOT)

    def command(self, args):
        return self.root.command(args)

    def adopt(self, pid):
        self.root.move(pid)

    def cpu_usec(self):
        return self.root.cpu_usec()


# The session placement: the user manager runs in USER_CGROUP/nicer-user-manager and the foreground in
# USER_CGROUP/benchsession, siblings under one parent as user@UID.service and a login session's
# session-N.scope are under user-UID.slice (Cinnamon's, XFCE's or MATE's desktop).
USER_CGROUP = "benchuser"
MANAGER_CGROUP = USER_CGROUP + "/nicer-user-manager"


class Session(Outside):
    """The foreground in benchuser/benchsession, the user manager's sibling under their parent: a login session
    (run.py starts the manager there when this placement is asked for)."""

    key = "session"
    label = "in the login session (a sibling of the user manager under the user's slice)"

    def __init__(self):
        self.root = RootCgroup(USER_CGROUP + "/benchsession")


BESIDE = Beside()


def run_foreground(*args, timeout=600, placement=BESIDE):
    return run(*placement.command(args), timeout=timeout)


def in_phases(measure, lengths, mark):
    """Runs measure(seconds) once for each of @p lengths, back to back, calling mark() just before and just
    after each: the list of what each returned."""
    out = []
    for seconds in lengths:
        mark()
        out.append(measure(seconds))
        mark()
    return out


def threads(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))
    except (OSError, StopIteration):
        return 0


def stress_ops_per_second(output):
    """Bogo operations per second of wall time from stress-ng --metrics-brief."""
    for line in output.splitlines():
        fields = line.split()
        if "cpu" in fields:
            at = fields.index("cpu")
            try:
                return float(fields[at + 1]) / float(fields[at + 2])
            except (IndexError, ValueError):
                continue
    raise RuntimeError("no cpu metrics in stress-ng's output:\n" + output)


def cpu_burst(seconds, placement=BESIDE):
    out = subprocess.run(placement.command(["stress-ng", "--cpu", NCPU, "--cpu-method", "matrixprod",
                                            "--timeout", f"{seconds:g}s", "--metrics-brief"]),
                         text=True, capture_output=True, timeout=seconds + 60)
    return stress_ops_per_second(out.stdout + out.stderr)


class Compute:
    """A fixed CPU benchmark on every CPU (stress-ng's matrix product): its throughput."""

    key = "compute"
    label = "compute-heavy"
    metric, unit, higher_is_better = "ops_per_s", "bogo ops/s", True

    def run(self, ctx, seconds, placement=BESIDE):
        return {"ops_per_s": cpu_burst(seconds, placement)}

    def run_phases(self, ctx, lengths, placement, mark):
        return in_phases(lambda seconds: self.run(ctx, seconds, placement), lengths, mark)


def parse_duration_ms(text):
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}[unit]


class Server:
    """nginx serving a small page to wrk: 8 connections, each pausing 2 ms between requests, so the server is
    busy but not saturated (a web server in use, not a load test). Requests/s and latency p50/p99."""

    key = "server"
    label = "latency-sensitive server"
    metric, unit, higher_is_better = "p99_ms", "ms (p99)", False

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="nicer-bench-nginx-"))
        self.dir.chmod(0o755)  # nginx's workers run as www-data
        (self.dir / "www").mkdir()
        (self.dir / "www/page.html").write_text("nicer " * 700)
        self.port = 18000 + os.getpid() % 1000
        (self.dir / "nginx.conf").write_text(f"""
worker_processes 1;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {self.dir}/body;
    proxy_temp_path {self.dir}/proxy;
    fastcgi_temp_path {self.dir}/fastcgi;
    uwsgi_temp_path {self.dir}/uwsgi;
    scgi_temp_path {self.dir}/scgi;
    server {{ listen 127.0.0.1:{self.port}; root {self.dir}/www; }}
}}
""")
        (self.dir / "pause.lua").write_text("function delay() return 2 end\n")

    def run(self, ctx, seconds, placement=BESIDE):
        return self.run_phases(ctx, [seconds], placement, lambda: None)[0]

    def run_phases(self, ctx, lengths, placement, mark):
        """One nginx, one wrk run for each phase."""
        nginx = subprocess.Popen(placement.command(["nginx", "-c", self.dir / "nginx.conf", "-g", "daemon off;"]),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while subprocess.run(["curl", "-sf", "-o", "/dev/null", f"http://127.0.0.1:{self.port}/page.html"]
                                 ).returncode != 0:
                if time.monotonic() > deadline or nginx.poll() is not None:
                    raise RuntimeError("nginx did not start: " + (self.dir / "error.log").read_text())
                time.sleep(0.1)
            return in_phases(lambda seconds: self.load(seconds, placement), lengths, mark)
        finally:
            nginx.terminate()
            nginx.wait()

    def load(self, seconds, placement):
        out = run_foreground("wrk", "-t1", "-c8", f"-d{seconds:g}s", "--latency", "-s", self.dir / "pause.lua",
                             f"http://127.0.0.1:{self.port}/page.html", timeout=seconds + 60, placement=placement)
        latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", out, re.M))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        return {"rps": rps, "p50_ms": parse_duration_ms(latency["50"]), "p99_ms": parse_duration_ms(latency["99"])}


class Video:
    """ffmpeg decoding an H.264 video (generated here, 1280x720 at 60 frames/s) at its native rate (-re); the
    decoded frames, shrunk to a few bytes, arrive here and are timed. A frame more than one frame interval
    behind the video's clock is late; speed is the video's length over the decoding's."""

    key = "video"
    label = "soft real-time (video)"
    metric, unit, higher_is_better = "late_pct", "% late frames", False
    fps = 60

    def __init__(self, seconds):
        self.file = Path(tempfile.mkdtemp(prefix="nicer-bench-video-")) / "video.mp4"
        run("ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"testsrc2=size=1280x720:rate={self.fps}", "-t",
            str(seconds), "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", self.file,
            timeout=600)

    def run(self, ctx, seconds, placement=BESIDE):
        frame = 16 * 16
        decoder = subprocess.Popen(placement.command(["ffmpeg", "-v", "error", "-re", "-i", self.file, "-vf",
                                                      "scale=16:16,format=gray", "-f", "rawvideo", "pipe:1"]),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        arrivals = []
        buffer = b""
        while True:
            chunk = decoder.stdout.read1(65536)
            if not chunk:
                break
            now = time.monotonic()
            buffer += chunk
            while len(buffer) >= frame:
                buffer = buffer[frame:]
                arrivals.append(now)
        decoder.wait()
        if len(arrivals) < 2:
            raise RuntimeError("ffmpeg decoded nothing: " + decoder.stderr.read().decode())
        interval = 1.0 / self.fps
        # The video's clock, fitted to the frames' median offset from it: how far behind it each one arrived.
        start = statistics.median(t - i * interval for i, t in enumerate(arrivals))
        behind = [t - (start + i * interval) for i, t in enumerate(arrivals)]
        late = sum(1 for b in behind if b > interval)
        speed = (len(arrivals) - 1) * interval / (arrivals[-1] - arrivals[0])
        return {"late_pct": 100.0 * late / len(arrivals), "speed": speed, "frames": len(arrivals),
                "worst_behind_ms": 1000 * max(behind)}


class Wakeup:
    """cyclictest: one thread per CPU at the normal policy, waking every 1 ms; how late the wake-ups were."""

    key = "wakeup"
    label = "wakeup latency"
    metric, unit, higher_is_better = "p99_us", "us (p99)", False

    def run(self, ctx, seconds, placement=BESIDE):
        # cyclictest first checks that it may use SCHED_FIFO, which the v1 cpu controller refuses inside the
        # user manager's cgroups and in a root-level cgroup of bench/cpu's (neither has real-time runtime:
        # cpu.rt_runtime_us 0), even with --policy=other. So it starts here and, once its measuring threads
        # exist (the check passed), moves into the foreground's cgroup: beside, a scope adopting it, as
        # systemd-run --scope would have made; outside, written into the cgroup's cgroup.procs.
        tester = subprocess.Popen(["cyclictest", "-q", "-m", "--policy=other", "-t", str(NCPU), "-i", "1000",
                                   "-D", f"{seconds:g}", "-h", "20000"], text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 10
            while threads(tester.pid) <= NCPU and tester.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)
            placement.adopt(tester.pid)
            out, err = tester.communicate(timeout=seconds + 60)
        finally:
            if tester.poll() is None:
                tester.kill()
                tester.wait()
        if tester.returncode != 0:
            raise RuntimeError("cyclictest failed: " + err)
        counts = {}
        for line in out.splitlines():
            if re.match(r"^\d{6}\s", line):
                bucket, *per_thread = line.split()
                counts[int(bucket)] = sum(int(c) for c in per_thread)
        overflows = sum(int(v) for v in re.search(r"# Histogram Overflows:(.*)", out).group(1).split())
        worst = max(int(v) for v in re.search(r"# Max Latencies:(.*)", out).group(1).split())
        total = sum(counts.values()) + overflows

        def percentile(p):
            need = p * total
            seen = 0
            for bucket in sorted(counts):
                seen += counts[bucket]
                if seen >= need:
                    return bucket
            return worst

        return {"p99_us": percentile(0.99), "p999_us": percentile(0.999), "max_us": worst, "wakeups": total}

    def run_phases(self, ctx, lengths, placement, mark):
        """One cyclictest for each phase."""
        return in_phases(lambda seconds: self.run(ctx, seconds, placement), lengths, mark)


class Memory:
    """A pointer chase over 1 GiB (bench/cpu/chase.c): each step waits for memory. Steps per second. Its
    background is memory streamers instead of md5sum."""

    key = "memory"
    label = "memory-bound"
    metric, unit, higher_is_better = "steps_per_s", "steps/s", True
    work = "memory"

    def __init__(self, chase, mib):
        self.chase = chase
        self.mib = mib

    def run(self, ctx, seconds, placement=BESIDE):
        out = run_foreground(self.chase, self.mib, seconds, timeout=seconds + 120, placement=placement)
        return {"steps_per_s": float(out.split()[0])}


class Bursty:
    """Busy on every CPU for 5 s (stress-ng), idle for 5 s, repeated. Its throughput while busy, and how fast
    the work has 90% of the idle CPU back after each burst (from the samples of the run)."""

    key = "bursty"
    label = "bursty (5 s on, 5 s off)"
    metric, unit, higher_is_better = "ops_per_s", "bogo ops/s (busy)", True
    busy = 5
    idle = 5

    def __init__(self, cycles):
        self.cycles = cycles

    def run(self, ctx, seconds, placement=BESIDE):
        ops = []
        ends = []
        for _ in range(self.cycles):
            ops.append(cpu_burst(self.busy, placement))
            ends.append(time.monotonic())
            time.sleep(self.idle)
        return {"ops_per_s": sum(ops) / len(ops), "burst_ends": ends}


def recovery_seconds(samples, ends, idle_seconds, threshold=0.9, span=0.3):
    """For each burst end: seconds from it until the first moment from which the work ran at @p threshold of
    the machine or more for the next @p span s; None when that did not happen within the idle phase."""
    out = []
    for end in ends:
        found = None
        for i, s in enumerate(samples):
            if s[0] < end or s[0] + span > end + idle_seconds:
                continue
            j = next((k for k in range(i + 1, len(samples)) if samples[k][0] >= s[0] + span), None)
            if j is None:
                break
            seconds = samples[j][0] - s[0]
            if (samples[j][3] - s[3]) / (seconds * NCPU) >= threshold:
                found = s[0] - end
                break
        out.append(found)
    return out
