#!/usr/bin/env python3
"""Runs in the guest: the share of the whole machine that cgroups used over a time, from the kernel's own
counters (cpu.stat usage_usec on cgroup v2), as one number per cgroup on one line.

Usage: cpu-share.py SECONDS CGROUP...   (CGROUP: a path under /sys/fs/cgroup, e.g. /system.slice/hog.service)
"""
import os
import sys
import time


def usage_usec(cgroup):
    with open(f"/sys/fs/cgroup{cgroup}/cpu.stat") as f:
        for line in f:
            key, value = line.split()
            if key == "usage_usec":
                return int(value)
    raise SystemExit(f"cpu-share: no usage_usec in {cgroup}/cpu.stat")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    seconds = float(sys.argv[1])
    cgroups = sys.argv[2:]
    before = [usage_usec(c) for c in cgroups]
    start = time.monotonic()
    time.sleep(seconds)
    after = [usage_usec(c) for c in cgroups]
    elapsed_usec = (time.monotonic() - start) * 1e6
    cpus = os.cpu_count()
    print(" ".join(f"{(a - b) / (elapsed_usec * cpus):.3f}" for a, b in zip(after, before)))


main()
