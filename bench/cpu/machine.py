"""What bench/cpu reads from the machine: the CPU counters of /proc/stat, the processes of a systemd unit's
cgroup, their CPU time and the bytes they read (the work they did), a cgroup's CPU time, and the user manager
it talks to; and the root-level cgroups it makes itself (RootCgroup), beside the user manager's as system.slice
is beside user.slice."""

import os
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path

NCPU = os.cpu_count() or 1
HZ = os.sysconf("SC_CLK_TCK")


def run(*args, check=True, timeout=60):
    """Runs a command, returns its stdout; raises with its stderr when it fails and check is set."""
    done = subprocess.run(args, text=True, capture_output=True, timeout=timeout)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def machine_ticks():
    """(busy, total) jiffies of the whole machine; iowait counts as idle."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:9]]
    idle = fields[3] + fields[4]
    total = sum(fields)
    return total - idle, total


def cgroup_base():
    """The cgroup tree systemd keeps its units in: the v2 tree (pure v2 or hybrid's unified), else v1's."""
    if Path("/sys/fs/cgroup/cgroup.controllers").exists():
        return Path("/sys/fs/cgroup")
    if Path("/sys/fs/cgroup/unified/cgroup.procs").exists():
        return Path("/sys/fs/cgroup/unified")
    return Path("/sys/fs/cgroup/systemd")


def cpu_cgroup_dir(unit):
    """The directory of a unit's cgroup that holds its CPU quota files (cpu.max, or cpu.cfs_quota_us on v1)."""
    cgroup = unit_cgroup(unit).lstrip("/")
    if Path("/sys/fs/cgroup/cgroup.controllers").exists():
        return Path("/sys/fs/cgroup") / cgroup
    return Path("/sys/fs/cgroup/cpu") / cgroup


def pure_v2():
    return Path("/sys/fs/cgroup/cgroup.controllers").exists()


def unit_cgroup(unit):
    return run("systemctl", "--user", "show", "-p", "ControlGroup", "--value", unit).strip()


def procs_below(directory):
    """Every process in the cgroup directory @p directory (of any hierarchy) and below it."""
    pids = []
    for dirpath, _, files in os.walk(directory):
        if "cgroup.procs" in files:
            try:
                with open(os.path.join(dirpath, "cgroup.procs")) as f:
                    pids.extend(int(line) for line in f if line.strip())
            except OSError:
                pass
    return pids


def cgroup_pids(cgroup):
    """Every process in the cgroup @p cgroup (a path like /user.slice/...) and below it."""
    return procs_below(cgroup_base() / cgroup.lstrip("/")) if cgroup else []


def pid_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def pid_rchar(pid):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def pid_memory_kib(pid):
    """(VmRSS, VmHWM) of a process in KiB."""
    rss = hwm = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    return rss, hwm


def cgroup_cpu_usec(cgroup):
    """The CPU time of the cgroup @p cgroup (a path like /user.slice/..., with everything below it) in µs:
    usage_usec of cpu.stat in the v2 tree (there on hybrid machines too, without the cpu controller), else
    cpuacct.usage of v1."""
    relative = cgroup.lstrip("/")
    stat = cgroup_base() / relative / "cpu.stat"
    if stat.exists():
        with open(stat) as f:
            for line in f:
                if line.startswith("usage_usec "):
                    return int(line.split()[1])
    with open(Path("/sys/fs/cgroup/cpuacct") / relative / "cpuacct.usage") as f:
        return int(f.read()) // 1000


# Moves the shell into the cgroups named before "--" (their cgroup.procs files), then execs the command after
# it: the command keeps the shell's PID and every child of it is born inside.
ENTER_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


class RootCgroup:
    """A cgroup of bench/cpu's own at the root of every hierarchy that counts the CPU (the v1 cpu and cpuacct
    hierarchies and the tree cgroup_base() gives, or the one tree of pure v2): a sibling of the user
    manager's, placed as system.slice is, at the default weight (cpu.shares 1024, cpu.weight 100).

    create() makes it (after removing a leftover of a run that was killed), command() gives the argument list
    that runs a command inside it, move() moves a running process in, remove() kills what is left in it and
    removes it."""

    def __init__(self, name):
        self.name = name
        self.cgroup = "/" + name

    def dirs(self):
        if pure_v2():
            return [Path("/sys/fs/cgroup") / self.name]
        roots = []
        for root in (Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup/cpuacct"), cgroup_base()):
            # cpu and cpuacct are one hierarchy where they are mounted together (cpu,cpuacct).
            if (root / "cgroup.procs").exists() and root.resolve() not in [r.resolve() for r in roots]:
                roots.append(root)
        return [root / self.name for root in roots]

    def create(self):
        self.remove()
        if pure_v2():
            # The root's children get the cpu controller (as systemd gives system.slice).
            Path("/sys/fs/cgroup/cgroup.subtree_control").write_text("+cpu\n")
        for d in self.dirs():
            d.mkdir()

    def command(self, args):
        return ["sh", "-c", ENTER_CGROUPS, "sh", *[str(d / "cgroup.procs") for d in self.dirs()], "--",
                *map(str, args)]

    def move(self, pid):
        """Moves the process @p pid (every thread of it) into the cgroup."""
        for d in self.dirs():
            (d / "cgroup.procs").write_text(f"{pid}\n")

    def pids(self):
        return cgroup_pids(self.cgroup)

    def cpu_usec(self):
        return cgroup_cpu_usec(self.cgroup)

    def remove(self):
        """Kills every process left in the cgroup (in any of its hierarchies) and removes it, children first.
        Raises when it cannot."""
        existing = [d for d in self.dirs() if d.exists()]
        if not existing:
            return
        deadline = time.monotonic() + 10
        while True:
            left = set()
            for d in existing:
                left.update(procs_below(d))
            if not left:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"bench/cpu: processes {sorted(left)} are still in {self.cgroup} after SIGKILL")
            for pid in left:
                try:
                    os.kill(pid, signal.SIGCONT)
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        for d in existing:
            for dirpath, _, _ in sorted(os.walk(d), key=lambda w: -len(w[0])):
                for attempt in range(50):
                    try:
                        os.rmdir(dirpath)
                        break
                    except FileNotFoundError:
                        break
                    except OSError:
                        # An exiting process leaves the cgroup a moment after it left cgroup.procs.
                        if attempt == 49:
                            raise
                        time.sleep(0.1)


class Work:
    """The background work, found through its systemd unit's cgroup (or the cgroup @p cgroup, a path like
    /benchboinc, for work that no unit holds): its CPU time and the bytes it read (md5sum and dd read
    /dev/zero, so the bytes are the work done, counted by the work itself). A process that exits keeps what
    it did; one that starts later counts from zero."""

    def __init__(self, unit, cgroup=""):
        self.unit = unit
        self.cgroup = cgroup
        self.seen = {}  # pid -> (cpu seconds, bytes) at the last look
        self.lock = threading.Lock()

    def pids(self):
        if not self.cgroup:
            self.cgroup = unit_cgroup(self.unit)
        return cgroup_pids(self.cgroup)

    def sample(self):
        """(CPU seconds, bytes read) of the work so far."""
        with self.lock:
            for pid in self.pids():
                try:
                    self.seen[pid] = (pid_cpu_seconds(pid), pid_rchar(pid))
                except (OSError, IndexError, ValueError):
                    pass
            return sum(v[0] for v in self.seen.values()), sum(v[1] for v in self.seen.values())


class NoWork:
    """The foreground alone: no background."""

    unit = ""

    def pids(self):
        return []

    def sample(self):
        return 0.0, 0


class Sampler(threading.Thread):
    """Samples the machine and the work every @p interval seconds: (time, busy, total, work CPU, work bytes)."""

    def __init__(self, work, interval=0.1):
        super().__init__(daemon=True)
        self.work = work
        self.interval = interval
        self.samples = []
        self.stopping = threading.Event()

    def take(self):
        busy, total = machine_ticks()
        cpu, read = self.work.sample()
        self.samples.append((time.monotonic(), busy, total, cpu, read))

    def run(self):
        while not self.stopping.is_set():
            self.take()
            self.stopping.wait(self.interval)

    def stop(self):
        self.stopping.set()
        self.join()
        self.take()
        return self.samples


def window(samples, start=None, end=None):
    """Shares of the whole machine between two times of a sample list: idle, work (background) and the rest
    (the foreground and everything else), and the work's bytes per second."""
    chosen = [s for s in samples if (start is None or s[0] >= start) and (end is None or s[0] <= end)]
    if len(chosen) < 2:
        return None
    a, b = chosen[0], chosen[-1]
    ticks = b[2] - a[2]
    seconds = b[0] - a[0]
    if ticks <= 0 or seconds <= 0:
        return None
    busy = (b[1] - a[1]) / ticks
    work = min(1.0, (b[3] - a[3]) / (seconds * NCPU))
    return {
        "idle": 1.0 - busy,
        "work": work,
        "other": max(0.0, busy - work),
        "work_bytes_per_s": (b[4] - a[4]) / seconds,
        "seconds": seconds,
    }


def user_manager_env(root, cgroup=None):
    """Starts (or finds) the user manager of tests/harness, in @p cgroup (a path below the root) when given:
    its environment variables, and whether it was started here (then stop_user_manager() stops it)."""
    env = dict(os.environ, NICER_UM_CGROUP=cgroup) if cgroup else None
    done = subprocess.run([str(root / "tests/harness/user-manager.sh"), "start"], text=True, capture_output=True,
                          timeout=90, env=env)
    if done.returncode != 0:
        raise RuntimeError("no systemd user manager: " + done.stderr.strip())
    env = {}
    for line in done.stdout.splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            env[key] = shlex.split(value)[0]
    return env, "started systemd --user" in done.stderr


def stop_user_manager(root, cgroup=None):
    env = dict(os.environ, NICER_UM_CGROUP=cgroup) if cgroup else None
    subprocess.run([str(root / "tests/harness/user-manager.sh"), "stop"], check=True, timeout=90, env=env,
                   stdout=subprocess.DEVNULL)
