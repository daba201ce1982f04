#!/usr/bin/env python3
"""The memory bench class, inside the Debian 12 guest (tests/vm/run.sh --bench), as root.

A program of the volunteer's that needs memory (it allocates and touches a working set, freed between passes,
as a browser opening tabs would) runs beside a work that holds a large working set of its own (two
`stress-ng --vm 1 --vm-keep` of 350 MiB, redirtying their pages), in the guest's 2 GiB without swap. The
program's working set is what the machine has available without the work, less 400 MiB: it fits alone, and
beside the work only if the work lets 300 MiB go. Policies, one after the other in each repetition:

  alone   the program without any work
  none    the work as two system services at nice 19, no limit (as a BOINC client's tasks run without nicer)
  fence   nicerd with today's fixed fence only: MemoryHigh 45% / MemoryMax 50% (memory-stall=0)
  boinc   the work as in "none", with BOINC's rule: every 10 s, while the work's memory is over 50% of the
          machine's, its largest task is taken out of memory (killed, to resume from its checkpoint), and
          started again once it fits
  rule    nicerd with the memory rule (memory-stall=0.01, the default)
  default nicerd as installed: the memory rule, resume-delay 60 s (the rows above set 3 s)
  share   the rule with a static memory-share of 25% of the machine while you're here (the default before
          the rule), resume-delay 60 s

Each run prints one JSON line: the program's pass times, its cgroup's PSI "full" stall over the passes, the
work's CPU seconds per second over 15 s before the program starts (its throughput when the program needs no
memory) and the OOM kills, each with whether it took the work.

With --swap MIB the same runs have a swap file of that size: the work's pages may then leave memory (the rule
lowers its memory.high and asks memory.reclaim), and the kernel's pressure shows before its cliff.

With --zram, the swap is a compressed swap device in memory (zram, lz4) of that size instead, as Fedora's and
ChromeOS's desktops have by default: pages leave at memory's speed, not the emulated disk's (about 40 MiB a
second under TCG).

Usage: guest.py [--repetitions N] [--policies a,b,...] [--swap MIB [--zram]]   (the bench; prints JSON lines)
       guest.py --program MIB PASSES                        (the program; run as the volunteer)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

USER, UID = "volunteer", 1000
WORK_MIB, INSTANCES = 350, 2
PASSES = 3
USER_ENV = f"XDG_RUNTIME_DIR=/run/user/{UID} DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/{UID}/bus"
NICER_WORK = "/sys/fs/cgroup/nicer.slice/nicer-work@1000.service"
PLAIN_WORK = "/sys/fs/cgroup/bench.slice"


def sh(command, check=True):
    return subprocess.run(command, shell=True, check=check, capture_output=True, text=True).stdout


def as_user(command, check=True):
    return sh(f"runuser -u {USER} -- env {USER_ENV} sh -c {json.dumps(command)}", check)


def meminfo(field):
    with open("/proc/meminfo") as f:
        return int(re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M).group(1)) << 10


def read_int(path, default=0):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return default


def cpu_usec(cgroup):
    try:
        with open(f"{cgroup}/cpu.stat") as f:
            return int(re.search(r"^usage_usec (\d+)", f.read(), re.M).group(1))
    except (OSError, AttributeError):
        return 0


def wait_work_settled(cgroup, seconds):
    """Whether the work came to hold its whole working set, or as much as its limits let it (default's
    memory-share holds it under that: over 200 MiB and no more than 8 MiB more in the last 3 s)."""
    history, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        history = history[-15:] + [read_int(f"{cgroup}/memory.current")]
        if history[-1] > INSTANCES * WORK_MIB - 50 << 20:
            return True
        if len(history) == 16 and history[-1] > 200 << 20 and history[-1] - history[0] < 8 << 20:
            return True
        time.sleep(0.2)
    return False


def program(mib, passes):
    """The volunteer's program: PASSES times, take MIB MiB and touch every page, then free it."""
    cgroup = "/sys/fs/cgroup" + open("/proc/self/cgroup").read().strip().split("::", 1)[1]

    def full_usec():
        with open(f"{cgroup}/memory.pressure") as f:
            return int(re.search(r"^full .*total=(\d+)", f.read(), re.M).group(1))

    before, times, starts = full_usec(), [], []
    for _ in range(passes):
        starts.append(round(time.time(), 3))
        started = time.monotonic()
        held = [b"p" * (16 << 20) for _ in range(mib // 16)]
        times.append(time.monotonic() - started)
        del held
        time.sleep(2)
    print(json.dumps({"pass_s": times, "pass_started": starts, "full_stall_s": (full_usec() - before) / 1e6}),
          flush=True)


def nicer_conf(settings):
    workload = json.dumps(["/usr/bin/stress-ng", "--vm", "1", "--vm-bytes", f"{WORK_MIB}M", "--vm-keep"])
    as_user(f"mkdir -p ~/.config/nicer; printf '%s\\n' 'instances = {INSTANCES}' 'workload = {workload}' "
            f">~/.config/nicer/nicerd.conf; systemctl --user restart nicerd.service; nicer set {settings}")


# Each nicerd policy's parameters, all of them set, since `nicer set` keeps them across restarts.
NICER_POLICIES = {
    "fence": "memory-share=1 away-memory-share=1 memory-stall=0 resume-delay=3",
    "rule": "memory-share=1 away-memory-share=1 memory-stall=0.01 resume-delay=3",
    "default": "memory-share=1 away-memory-share=1 memory-stall=0.01 resume-delay=60",
    "share": "memory-share=0.25 away-memory-share=1 memory-stall=0.01 resume-delay=60",
}


class BoincRule:
    """BOINC's memory rule (ram_max_used_busy_frac 50%): checked every 10 s, the largest task out of memory
    while the work's memory is over half the machine's, started again once it fits."""

    def __init__(self, units):
        self.units, self.stopped, self.done = units, [], threading.Event()
        self.limit = meminfo("MemTotal") // 2
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.wait(10):
            running = [u for u in self.units if u not in self.stopped]
            held = {u: read_int(f"{PLAIN_WORK}/{u}/memory.current") for u in running}
            if sum(held.values()) > self.limit and held:
                largest = max(held, key=held.get)
                sh(f"systemctl stop {largest}", check=False)
                self.stopped.append(largest)
            elif self.stopped and sum(held.values()) + (WORK_MIB << 20) <= self.limit:
                start_plain_unit(self.stopped.pop())

    def stop(self):
        self.done.set()
        self.thread.join()


def start_plain_unit(unit):
    sh(f"systemd-run --quiet --unit={unit} --slice=bench.slice -p User={USER} -p Nice=19 -p MemoryAccounting=yes "
       f"-p WorkingDirectory=/tmp "
       f"/usr/bin/stress-ng --vm 1 --vm-bytes {WORK_MIB}M --vm-keep")


def start_work(policy):
    """Starts the policy's work; returns (its cgroup, what stops it)."""
    if policy in ("none", "boinc"):
        units = [f"bench-work-{i}.service" for i in range(INSTANCES)]
        for unit in units:
            start_plain_unit(unit)
        rule = BoincRule(units) if policy == "boinc" else None

        def stop():
            if rule:
                rule.stop()
            sh("systemctl stop 'bench-work-*.service'; systemctl reset-failed 'bench-work-*' 2>/dev/null",
               check=False)

        return PLAIN_WORK, stop
    nicer_conf(NICER_POLICIES[policy])
    return NICER_WORK, lambda: as_user("systemctl --user stop nicerd.service", check=False)


def run_once(policy, program_mib):
    sh("sync; echo 3 >/proc/sys/vm/drop_caches")
    since = sh("date '+%F %T'").strip()
    result = {"policy": policy, "program_mib": program_mib}
    cgroup, stop = (None, None) if policy == "alone" else start_work(policy)
    try:
        if cgroup:
            result["work_filled"] = wait_work_settled(cgroup, 180)
            result["work_mib"] = read_int(f"{cgroup}/memory.current") >> 20
            first = cpu_usec(cgroup)
            time.sleep(15)
            result["work_cpu"] = (cpu_usec(cgroup) - first) / 15e6
            if policy in NICER_POLICIES:  # whether the profile for while you're here held
                result["you"] = as_user("nicer status | sed -n 's/^  you *//p'", check=False).strip()
        out = as_user(f"systemd-run --user --quiet --wait --pipe --collect --unit=bench-program python3 "
                      f"/usr/local/bin/bench-mem --program {program_mib} {PASSES}", check=False)
        try:
            result.update(json.loads(out.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            result["program_failed"] = out.strip()[-300:]
    finally:
        if stop:
            stop()
    if policy in NICER_POLICIES:  # what the rule did, beside the passes' starts, for the log of the run
        log = sh(f"journalctl _SYSTEMD_USER_UNIT=nicerd.service -o short-unix --since '{since}' | "
                 "grep -E 'memory|PSI|OOM' | tail -n 20", check=False)
        print(f"bench-mem: {policy}: passes started {result.get('pass_started')}\n{log}", file=sys.stderr)
    kills = sh(f"journalctl -k -o cat --since '{since}' | grep '^oom-kill:' || true").splitlines()
    result["oom_kills_work"] = sum(1 for k in kills if re.search(r"task_memcg=/(nicer|bench)\.slice/", k))
    result["oom_kills_other"] = len(kills) - result["oom_kills_work"]
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--program", nargs=2, type=int, metavar=("MIB", "PASSES"))
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--policies", default="alone,none,fence,boinc,rule,default,share")
    parser.add_argument("--swap", type=int, default=0, metavar="MIB")
    parser.add_argument("--zram", action="store_true")
    args = parser.parse_args()
    if args.program:
        return program(*args.program)
    if args.swap and args.zram:
        sh(f"modprobe zram num_devices=1 && echo lz4 >/sys/block/zram0/comp_algorithm && "
           f"echo {args.swap}M >/sys/block/zram0/disksize && mkswap -q /dev/zram0 && swapon /dev/zram0")
    elif args.swap:
        sh(f"fallocate -l {args.swap}M /swapfile && chmod 600 /swapfile && mkswap -q /swapfile && swapon /swapfile")
    as_user("systemctl --user stop nicerd.service", check=False)
    sh("systemctl stop boinc-client.service", check=False)
    program_mib = (meminfo("MemAvailable") >> 20) - 400
    for repetition in range(args.repetitions):
        for policy in args.policies.split(","):
            result = run_once(policy, program_mib)
            result["repetition"] = repetition
            result["swap_mib"] = args.swap
            result["swap_kind"] = "zram" if args.zram else "file"
            print(json.dumps(result), flush=True)
            print(f"bench-mem: {policy} {repetition}: {result}", file=sys.stderr, flush=True)
    as_user("rm -f ~/.config/nicer/nicerd.conf", check=False)
    if args.swap and args.zram:
        sh("swapoff /dev/zram0; echo 1 >/sys/block/zram0/reset", check=False)
    elif args.swap:
        sh("swapoff /swapfile; rm -f /swapfile", check=False)


if __name__ == "__main__":
    sys.exit(main())
