"""The ways a volunteer could run background work, each set up on the real user manager in a slice that is a
sibling of benchfg.slice (as another session's or another user's work would be), torn down after; and one
outside it, as Debian runs BOINC: a system service (DebianService).

Every policy runs the same work: one `md5sum /dev/zero` per CPU (the thesis's hog), or, for the memory-bound
class, one memory streamer per CPU (`dd` from /dev/zero in 64 MiB blocks: each read writes 64 MiB).

Each policy says in which of the foreground's placements it runs by default (`placements`: beside, the
foreground in benchfg.slice under the user manager; outside, in a root-level cgroup as system.slice is), what
share of the CPU the rest of the machine leaves it its work has once its controller released it after a
foreground (`released_share`, waited for before a foreground's first seconds are measured), and why it cannot
run here, if it cannot (`unavailable(ctx)`)."""

import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from machine import NCPU, RootCgroup, Work, cpu_cgroup_dir, machine_ticks, pure_v2, run

BESIDE_ONLY = ("beside",)
EVERY_PLACEMENT = ("beside", "outside", "session")

WORK = {
    "cpu": ["md5sum", "/dev/zero"],
    "memory": ["dd", "if=/dev/zero", "of=/dev/null", "bs=64M"],
}


def start_slice(name, properties):
    """Starts a transient slice with @p properties ([(name, signature, value)]); gone with the slice."""
    args = []
    for prop, sig, value in properties:
        args += [prop, sig, str(value)]
    run("busctl", "--user", "call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
        "org.freedesktop.systemd1.Manager", "StartTransientUnit", "ssa(sv)a(sa(sv))", name, "fail",
        str(len(properties)), *args, "0")


def stop_units(*units):
    for unit in units:
        run("systemctl", "--user", "stop", unit, check=False)
        # Drop-ins of set-property --runtime outlive a transient unit; a later slice of the name would get them.
        run("systemctl", "--user", "revert", unit, check=False)


def signal_all(work, sig):
    for pid in work.pids():
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


class Policy:
    """A policy with its own slice of services: subclasses give the slice's and the services' properties."""

    key = ""
    label = ""
    classes = None  # the classes it is measured on; None: every class
    placements = BESIDE_ONLY  # where the foreground is put by default (--only runs a policy in every one)
    released_share = 0.8  # the work's share of the CPU left to it once released (None: never released)
    slice_properties = [("CPUAccounting", "b", "true")]
    service_properties = []

    def __init__(self, ctx):
        self.ctx = ctx
        # No dash: a dash in a slice's name nests it (bench-bg.slice would sit in bench.slice, beside the
        # foreground's, and weights would be compared one level up). benchbg.slice is a sibling of
        # benchfg.slice and of nicer.slice, as another session's or user's slice would be.
        self.slice = "benchbg.slice"
        self.work = None

    def unavailable(self, ctx):
        """Why the policy cannot run here, or None."""
        return None

    def instances(self, kind):
        return NCPU

    def start(self, kind):
        start_slice(self.slice, self.slice_properties)
        for i in range(self.instances(kind)):
            props = [f"--property={p}" for p in self.service_properties]
            run("systemd-run", "--user", "--quiet", "--collect", f"--unit=bench-bg-{self.key}-{i}.service",
                f"--slice={self.slice}", *props, "--", *WORK[kind])
        self.work = Work(self.slice)

    def before_class(self, cls):
        pass

    def stop(self):
        if self.work:
            signal_all(self.work, signal.SIGCONT)
        stop_units(self.slice)


class SameWeight(Policy):
    key = "same-weight"
    label = "uncontrolled, same weight"
    placements = EVERY_PLACEMENT


class Nice19(Policy):
    key = "nice19"
    label = "nice 19"
    service_properties = ["Nice=19"]


class IdleWeight(Policy):
    key = "idle-weight"
    label = "CPUWeight=idle"
    placements = EVERY_PLACEMENT
    slice_properties = [("CPUAccounting", "b", "true"), ("CPUWeight", "t", 0)]


class CpuIdleByHand(Policy):
    """cpu.idle written straight into the slice's v1 cpu cgroup: what CPUWeight=idle is on cgroup v2, which
    systemd 252 cannot set on v1 (it gives the smallest cpu.shares instead). Only where v1 has the file."""

    key = "cpu-idle-v1"
    label = "cpu.idle=1 (v1 cgroup, by hand)"
    placements = EVERY_PLACEMENT
    slice_properties = [("CPUAccounting", "b", "true"), ("CPUWeight", "t", 100)]

    @staticmethod
    def possible():
        return not pure_v2() and Path("/sys/fs/cgroup/cpu/cpu.idle").exists()

    def start(self, kind):
        super().start(kind)
        (cpu_cgroup_dir(self.slice) / "cpu.idle").write_text("1\n")


class StaticCap(Policy):
    """The thesis's worst-case static allocation: a fixed cap sized for the foreground's peak, measured alone
    (1 - its highest 1 s share of the machine), i.e. a cap predicted correctly for each foreground."""

    key = "static"
    label = "static cap, worst case"
    released_share = None  # held at its cap

    def before_class(self, cls):
        share = max(0.01, 1.0 - self.ctx.peak_share.get(cls, 1.0))
        run("systemctl", "--user", "set-property", "--runtime", self.slice,
            f"CPUQuota={max(1, round(share * NCPU * 100))}%")


class RuleThread(threading.Thread):
    """A once-a-second rule over the machine's CPU use, acting on the work."""

    def __init__(self, work, step):
        super().__init__(daemon=True)
        self.work = work
        self.step = step
        self.stopping = threading.Event()

    def run(self):
        busy, total = machine_ticks()
        cpu, _ = self.work.sample()
        while not self.stopping.wait(1.0):
            busy2, total2 = machine_ticks()
            cpu2, _ = self.work.sample()
            ticks = max(1, total2 - total)
            machine = (busy2 - busy) / ticks
            work = min(1.0, (cpu2 - cpu) / NCPU)
            self.step(max(0.0, machine - work))
            busy, total, cpu = busy2, total2, cpu2

    def stop(self):
        self.stopping.set()
        self.join()


class RulePolicy(Policy):
    """A policy whose rule acts on the work once a second: step(others) with the share of the machine that
    everything but the work used in the last second."""

    def start(self, kind):
        super().start(kind)
        self.prepare()
        self.rule = RuleThread(self.work, self.step)
        self.rule.start()

    def stop(self):
        self.rule.stop()
        super().stop()


class BoincRule(RulePolicy):
    """BOINC's own rule with its defaults: suspend every task (SIGSTOP) while the CPU use of everything else,
    averaged over the last 10 s, is above 25%; resume when it is not, after at least 20 s suspended."""

    key = "boinc"
    label = "BOINC rule (suspend while others > 25%)"

    def prepare(self):
        self.recent = collections.deque(maxlen=10)
        self.suspended_at = None

    def step(self, others):
        self.recent.append(others)
        busy = sum(self.recent) / len(self.recent) > 0.25
        now = time.monotonic()
        if self.suspended_at is None and busy:
            signal_all(self.work, signal.SIGSTOP)
            self.suspended_at = now
        elif self.suspended_at is not None and not busy and now - self.suspended_at >= 20:
            signal_all(self.work, signal.SIGCONT)
            self.suspended_at = None


class Sideloader(RulePolicy):
    """resctl-demo's sideloader rule: every second set the work's cpu.max so that 20% of the machine stays
    idle (the cap is 80% less what everything else uses), and freeze the work while everything else alone
    leaves no room (overload)."""

    key = "sideloader"
    label = "sideloader rule (20% kept idle)"
    released_share = 0.7  # 20% kept idle
    slice_properties = [("CPUAccounting", "b", "true"), ("CPUQuotaPerSecUSec", "t", 1_000_000 * NCPU)]

    def prepare(self):
        self.quota_dir = cpu_cgroup_dir(self.slice)
        self.frozen = False

    def write_cap(self, share):
        if pure_v2():
            (self.quota_dir / "cpu.max").write_text(f"{int(share * NCPU * 100000)} 100000\n")
        else:
            (self.quota_dir / "cpu.cfs_period_us").write_text("100000\n")
            (self.quota_dir / "cpu.cfs_quota_us").write_text(f"{max(1000, int(share * NCPU * 100000))}\n")

    def step(self, others):
        cap = 0.8 - others
        if cap <= 0.01:
            if not self.frozen:
                signal_all(self.work, signal.SIGSTOP)
                self.frozen = True
            return
        self.write_cap(cap)
        if self.frozen:
            signal_all(self.work, signal.SIGCONT)
            self.frozen = False


class DebianService(Policy):
    """boinc-client.service as Debian runs it: the work in a system service, in system.slice (here benchboinc,
    a cgroup at the root of the hierarchies, as system.slice is: outside the user manager), with the
    service's Nice=10, and every task SCHED_IDLE, as the BOINC client makes its applications. SCHED_IDLE and
    nice order the work's tasks against the foreground's only where they share a run queue, within one cgroup:
    across cgroups it is the cgroups' weights, and benchboinc has the default one."""

    key = "debian-service"
    label = "Debian's boinc-client.service (system.slice, Nice=10, SCHED_IDLE)"
    placements = EVERY_PLACEMENT
    cgroup_name = "benchboinc"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.root = RootCgroup(self.cgroup_name)
        self.processes = []

    def start(self, kind):
        try:
            self.root.create()
            for _ in range(self.instances(kind)):
                self.processes.append(subprocess.Popen(
                    self.root.command(["chrt", "--idle", "0", "nice", "-n", "10", *WORK[kind]]),
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            self.work = Work(self.cgroup_name, cgroup=self.root.cgroup)
            deadline = time.monotonic() + 10
            while not self.started(WORK[kind][0]):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.label}: the work did not run SCHED_IDLE at nice 10 in "
                                       f"{self.root.cgroup} within 10 s")
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise

    def started(self, command):
        """Whether every work process runs @p command in the cgroup, SCHED_IDLE at nice 10."""
        pids = set(self.root.pids())
        for process in self.processes:
            if process.poll() is not None:
                raise RuntimeError(f"{self.label}: the work exited at start ({process.returncode})")
            try:
                with open(f"/proc/{process.pid}/comm") as f:
                    comm = f.read().strip()
                with open(f"/proc/{process.pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                return False
            # Fields 19 and 41 of stat: the nice value and the scheduling policy (5: SCHED_IDLE).
            if process.pid not in pids or comm != command[:15] or int(fields[16]) != 10 or int(fields[38]) != 5:
                return False
        return True

    def stop(self):
        if self.work:
            signal_all(self.work, signal.SIGCONT)
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes = []
        self.root.remove()


class RootIdleSlice(DebianService):
    """The work in the root idle slice, as nicer's .deb runs it (the system's nicer.slice, directly under the
    root cgroup with CPUWeight=idle): here benchidle, a cgroup at the root of every hierarchy that counts the
    CPU, with cpu.idle 1 written by hand (on these hybrid machines into the v1 cpu hierarchy, as systemd 252
    cannot; on pure v2 into the one tree). The work runs at plain priority: cpu.idle at the root makes it yield
    at once to every other root-level group (system.slice, user.slice, so every program on the machine). In
    that place nicerd's loop answers no demand and leaves the quota whole (docs/placement.md), so the kernel
    alone is what this row measures: nicer's root idle slice on these machines, where nicerd itself cannot
    put the work there (the cpu controller is on cgroup v1)."""

    key = "root-idle"
    label = "root idle slice (cpu.idle=1 at the root, by hand)"
    cgroup_name = "benchidle"

    @staticmethod
    def possible():
        return pure_v2() or Path("/sys/fs/cgroup/cpu/cpu.idle").exists()

    def start(self, kind):
        try:
            self.root.create()
            for d in self.root.dirs():
                if (d / "cpu.idle").exists():
                    (d / "cpu.idle").write_text("1\n")
            for _ in range(self.instances(kind)):
                self.processes.append(subprocess.Popen(self.root.command(WORK[kind]), stdin=subprocess.DEVNULL,
                                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            self.work = Work(self.cgroup_name, cgroup=self.root.cgroup)
            if not any((d / "cpu.idle").exists() and (d / "cpu.idle").read_text().strip() == "1"
                       for d in self.root.dirs()):
                raise RuntimeError(f"{self.label}: no cpu.idle 1 in {self.root.cgroup}")
        except BaseException:
            self.stop()
            raise


class Concurrency(Policy):
    """For the memory-bound class: fewer work instances running at once, as many as nicer's quota would give
    CPUs (its measured share of the machine in this run, rounded, at least one), at the idle weight."""

    key = "concurrency"
    label = "concurrency cap (nicer's share)"
    classes = ["memory"]
    slice_properties = IdleWeight.slice_properties

    def instances(self, kind):
        share = self.ctx.nicer_memory_share
        return max(1, min(NCPU, round(share * NCPU))) if share is not None else max(1, NCPU // 2)


class Nicer(Policy):
    """nicerd itself, at its default period, running the same work as its custom workload in nicer.slice."""

    key = "nicer"
    label = "nicer defaults"
    placements = EVERY_PLACEMENT
    options = []

    def start(self, kind):
        self.state = tempfile.mkdtemp(prefix="nicer-bench-")
        env = {"XDG_STATE_HOME": self.state, "XDG_CONFIG_HOME": self.state, "XDG_DATA_HOME": self.state + "/data"}
        log = Path(self.state) / "nicerd.log"
        run("systemd-run", "--user", "--quiet", "--collect", "--unit=bench-nicerd.service",
            f"--property=StandardError=file:{log}",
            *[f"--setenv={k}={v}" for k, v in env.items()], str(self.ctx.nicerd), "--instances", str(NCPU),
            *self.options, "--", *WORK[kind])
        deadline = time.monotonic() + 30
        while subprocess.run([str(self.ctx.nicer), "status"], capture_output=True, timeout=10).returncode != 0:
            state = run("systemctl", "--user", "is-active", "bench-nicerd.service", check=False).strip()
            if state not in ("active", "activating", "reloading"):
                said = log.read_text().strip() if log.exists() else ""
                raise RuntimeError(f"{self.label}: nicerd {' '.join(self.options)} exited at start ({state}): "
                                   + (said[-2000:] or "it said nothing"))
            if time.monotonic() > deadline:
                raise RuntimeError("nicerd did not answer within 30 s: see `systemctl --user status bench-nicerd`")
            time.sleep(0.2)
        self.work = Work("nicer.slice")
        self.pid = int(run("systemctl", "--user", "show", "-p", "MainPID", "--value", "bench-nicerd.service"))

    def stop(self):
        run("systemctl", "--user", "stop", "bench-nicerd.service", check=False)
        deadline = time.monotonic() + 30
        while run("systemctl", "--user", "is-active", "nicer.slice", check=False).strip() == "active":
            if time.monotonic() > deadline:
                raise RuntimeError("nicer.slice is still active 30 s after nicerd stopped")
            time.sleep(0.2)


class NicerThesis(Nicer):
    key = "nicer-thesis"
    label = "nicer, thesis mode (quota only)"
    placements = EVERY_PLACEMENT
    options = ["--no-idle-weight", "--multiplier-decay", "1", "--quota-period", "0.1"]


class NicerBefore(Nicer):
    """nicer's defaults before bench/cpu: the idle weight, the thesis's decay and systemd's 100 ms window."""

    key = "nicer-before"
    label = "nicer, earlier defaults"
    options = ["--multiplier-decay", "1", "--quota-period", "0.1"]


class NicerWideBand(Nicer):
    key = "nicer-band8"
    label = "nicer, band x8 (min multiplier 8)"
    options = ["--min-multiplier", "8"]
    released_share = 0.5  # a band of 8 x 5% kept idle


class NicerCpuIdleByHand(Nicer):
    """nicer's defaults, with cpu.idle written by hand into nicer.slice's v1 cpu cgroup: what nicer's
    CPUWeight=idle is on a pure cgroup v2 desktop, which systemd cannot set on these hybrid machines."""

    key = "nicer-cpu-idle-v1"
    label = "nicer defaults + cpu.idle=1 (v1, by hand)"
    placements = EVERY_PLACEMENT

    def start(self, kind):
        super().start(kind)
        (cpu_cgroup_dir("nicer.slice") / "cpu.idle").write_text("1\n")


class NicerMachineSignal(NicerCpuIdleByHand):
    """The row above with nicerd's controller fed the whole machine's idle time (`--signal machine`, the
    thesis's signal), where nicerd's default (`--signal auto`) feeds it only the demand from outside the user
    manager once the work's slice has cpu.idle 1. Skipped, with a note, by a nicerd without --signal."""

    key = "nicer-signal-machine"
    label = "nicer, whole-machine signal + cpu.idle=1 (v1, by hand)"
    options = ["--signal", "machine"]

    def unavailable(self, ctx):
        if "--signal" not in ctx.nicerd_help:
            return f"{ctx.nicerd} has no --signal option (`nicerd --help`): this row needs a nicerd that has it"
        return None


class NicerWindow100ms(Nicer):
    """nicer's defaults with systemd's 100 ms bandwidth window instead of one as long as the period: the
    shipped default until nicerd learnt to change the quota where the kernel's windows start."""

    key = "nicer-window-100ms"
    label = "nicer defaults, 100 ms window"
    options = ["--quota-period", "0.1"]


class NicerWindow10ms(Nicer):
    """An experiment, run only when named (--only): nicer's defaults with a 10 ms bandwidth window."""

    key = "nicer-window-10ms"
    label = "nicer defaults, 10 ms window"
    options = ["--quota-period", "0.01"]


class NicerBoinc(Nicer):
    """An experiment, run only when named (--only): nicerd's boinc preset, its work the real BOINC client
    (Debian's) with one task per CPU from the local test project (tests/boinc/project: each hashes its input,
    as md5sum does), nicer keeping BOINC's clock (the default: the client stopped in spans BOINC does not count
    while a task's elapsed time runs ahead of its CPU time). Beside NicerBoincWallClock it says whether that
    costs the foreground anything."""

    key = "nicer-boinc"
    label = "nicer, BOINC client, BOINC's clock kept"
    placements = EVERY_PLACEMENT
    classes = ["compute", "server", "video", "wakeup", "bursty"]
    # A band of 40% keeps the tasks at a low share all along (about half their CPUs), so that the client is
    # stopped for the clock while the foregrounds are measured; with the default band the tasks gain enough
    # lead on an idle machine that the clock is not kept within a run's short phases.
    options = ["--reserve-band", "0.4"]
    released_share = 0.5  # 40% kept idle
    project = Path(__file__).resolve().parents[2] / "tests/boinc/project/boinc_test_project.py"

    def unavailable(self, ctx):
        if not Path("/usr/bin/boinc").exists():
            return "Debian's boinc-client is not installed (/usr/bin/boinc)"
        return None

    def start(self, kind):
        self.state = tempfile.mkdtemp(prefix="nicer-bench-boinc-")
        state = Path(self.state)
        boinc_dir = state / "data/nicer/boinc"
        boinc_dir.mkdir(parents=True)
        self.server = subprocess.Popen(
            ["python3", str(self.project), "--dir", str(state / "server"), "--workunits", str(NCPU),
             "--task-seconds", "100000", "--url-file", str(state / "url"), "-q"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not (state / "url").exists() or not (state / "url").read_text().strip():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.label}: the test project did not start within 30 s")
            time.sleep(0.2)
        url = (state / "url").read_text().strip()
        run("python3", str(self.project), "prepare-client", "--boinc-dir", str(boinc_dir), "--url", url,
            "--task-seconds", "100000", "--client-config")
        env = {"XDG_STATE_HOME": self.state, "XDG_CONFIG_HOME": self.state, "XDG_DATA_HOME": self.state + "/data"}
        log = state / "nicerd.log"
        run("systemd-run", "--user", "--quiet", "--collect", "--unit=bench-nicerd.service",
            f"--property=StandardError=file:{log}",
            *[f"--setenv={k}={v}" for k, v in env.items()], str(self.ctx.nicerd), "--workload-preset", "boinc",
            *self.options)
        deadline = time.monotonic() + 60
        while self.boinc().get("state") != "running":
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.label}: nicerd's BOINC client did not answer within 60 s: {log}")
            time.sleep(1)
        run(str(self.ctx.nicer), "boinc", "attach", url, "nicertest_authenticator", timeout=130)
        deadline = time.monotonic() + 120
        while sum(t["state"] == "running" for t in self.tasks()) < NCPU:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.label}: {NCPU} BOINC tasks were not running within 120 s: {log}")
            time.sleep(1)
        self.work = Work("nicer.slice")
        self.pid = int(run("systemctl", "--user", "show", "-p", "MainPID", "--value", "bench-nicerd.service"))

    def boinc(self):
        """`nicer boinc --json`, or {} while nicerd does not answer."""
        done = subprocess.run([str(self.ctx.nicer), "boinc", "--json"], capture_output=True, text=True, timeout=30)
        return json.loads(done.stdout) if done.returncode == 0 else {}

    def tasks(self):
        return self.boinc().get("tasks", [])

    def stop(self):
        clock = self.boinc().get("clock", "")
        print(f"bench/cpu: {self.label}: BOINC's clock at the end: {clock or 'not kept in the last minute'}",
              file=sys.stderr)
        super().stop()
        self.server.terminate()
        self.server.wait()


class NicerBoincWallClock(NicerBoinc):
    """The row above with BOINC's clock left to BOINC (--boinc-clock 0): nicer's behaviour before."""

    key = "nicer-boinc-wall"
    label = "nicer, BOINC client, BOINC's wall clock"
    options = NicerBoinc.options + ["--boinc-clock", "0"]


def extra_policies():
    return [NicerWindow10ms, NicerBoinc, NicerBoincWallClock]


def all_policies():
    """In the order they run in each repetition: nicer's defaults before the concurrency cap, which uses
    nicer's share."""
    by_hand = CpuIdleByHand.possible()
    return ([SameWeight, Nice19, IdleWeight] + ([CpuIdleByHand] if by_hand else [])
            + [DebianService] + ([RootIdleSlice] if RootIdleSlice.possible() else []) + [StaticCap, BoincRule, Sideloader, NicerThesis, NicerBefore, NicerWindow100ms, Nicer]
            + ([NicerCpuIdleByHand, NicerMachineSignal] if by_hand else []) + [NicerWideBand, Concurrency])
