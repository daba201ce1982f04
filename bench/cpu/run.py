#!/usr/bin/python3
"""Does the user feel the volunteer work? Every foreground class against every background policy a volunteer
could pick, measured in one run on this machine, as ratios to the foreground alone.

Each repetition runs the foregrounds alone (the baseline), then each policy with its work set up on the real
user manager: the work fills the machine for a while (the "idle machine" figure), then each foreground runs in
turn. Medians over the repetitions go to OUT/summary.md (Markdown), the raw trials to OUT/results.json and
the plots to OUT/*.png (matplotlib). docs/benchmarks.md says what the figures mean and how to re-run them.

Needs root (the private user manager of tests/harness, as the tests use) and the packages that
`packaging/dev.sh bench` installs. Usage:

    bench/cpu/run.py [--build DIR] [--quick] [--reps N] [--seconds S] [--settle S] [--cycles N]
                     [--only POLICY,...] [--classes CLASS,...] [--out DIR]
"""

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from foregrounds import FG_SLICE, Bursty, Compute, Memory, Server, Video, Wakeup, recovery_seconds  # noqa: E402
from machine import (NCPU, NoWork, Sampler, pid_cpu_seconds, pid_memory_kib, run, stop_user_manager,  # noqa: E402
                     user_manager_env, window)
from policies import all_policies, extra_policies, start_slice, stop_units  # noqa: E402
import report  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class Alone:
    """The baseline: the foreground with no background at all."""

    key = "alone"
    label = "none (foreground alone)"
    classes = None

    def __init__(self, ctx):
        self.work = NoWork()

    def start(self, kind):
        pass

    def before_class(self, cls):
        pass

    def stop(self):
        pass


class Context:
    def __init__(self, build):
        self.nicerd = build / "app/daemon/nicerd"
        self.nicer = build / "app/cli/nicer"
        self.peak_share = {}  # class -> the foreground's highest 1 s share of the machine, alone
        self.nicer_memory_share = None


def peak_share(samples, span=1.0):
    best = 0.0
    for i, s in enumerate(samples):
        j = next((k for k in range(i + 1, len(samples)) if samples[k][0] >= s[0] + span), None)
        if j is None:
            break
        w = window(samples[i:j + 1])
        if w:
            best = max(best, 1.0 - w["idle"])
    return best


def trial(ctx, policy, cls, seconds, rep):
    sampler = Sampler(policy.work)
    sampler.start()
    time.sleep(0.2)
    start = time.monotonic()
    metrics = cls.run(ctx, seconds)
    end = time.monotonic()
    samples = sampler.stop()
    record = {"rep": rep, "policy": policy.key, "class": cls.key, "metrics": metrics,
              "window": window(samples, start, end)}
    if isinstance(cls, Bursty):
        record["recovery_s"] = recovery_seconds(samples, metrics.pop("burst_ends"), cls.idle)
        record["timeline"] = [(s[0] - start, s[3]) for s in samples]
    if policy.key == "alone":
        ctx.peak_share[cls.key] = max(ctx.peak_share.get(cls.key, 0.0), peak_share(samples))
    return record


def idle_machine(policy, settle, seconds, rep):
    """The work alone on the machine, after it had @p settle seconds (and nicerd a few periods) to settle: its
    share over @p seconds, as long as a foreground's trial."""
    time.sleep(max(settle, 3))
    sampler = Sampler(policy.work)
    sampler.start()
    time.sleep(seconds)
    return {"rep": rep, "policy": policy.key, "class": "idle", "metrics": {}, "window": window(sampler.stop())}


def nicerd_cost(policy, since):
    cpu = pid_cpu_seconds(policy.pid)
    rss, hwm = pid_memory_kib(policy.pid)
    return {"cpu_s": cpu - since[0], "seconds": time.monotonic() - since[1], "rss_kib": rss, "hwm_kib": hwm}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build", help="nicer's build directory")
    parser.add_argument("--quick", action="store_true", help="one repetition of short runs (under 10 minutes)")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (medians are reported)")
    parser.add_argument("--seconds", type=float, default=10, help="seconds each foreground runs")
    parser.add_argument("--settle", type=float, default=3, help="seconds the work has before each foreground")
    parser.add_argument("--cycles", type=int, default=2, help="busy/idle cycles of the bursty foreground")
    parser.add_argument("--only", default="", help="comma-separated policy keys to run (the baseline always runs)")
    parser.add_argument("--classes", default="", help="comma-separated foreground classes to run (default: all)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/nicer-bench-cpu"), help="where results go")
    args = parser.parse_args()
    if args.quick:
        args.reps, args.seconds, args.settle, args.cycles = 1, 3, 1.5, 1
    seconds = int(args.seconds)
    for tool in ("stress-ng", "wrk", "nginx", "ffmpeg", "cyclictest", "curl", "busctl", "cc"):
        if shutil.which(tool) is None:
            sys.exit(f"bench/cpu: '{tool}' is missing: `packaging/dev.sh bench` installs what this needs")
    if not (args.build / "app/daemon/nicerd").exists():
        sys.exit(f"bench/cpu: no nicerd in {args.build}: build nicer first (packaging/dev.sh build)")
    args.out.mkdir(parents=True, exist_ok=True)
    env, started_manager = user_manager_env(ROOT)
    os.environ.update(env)

    ctx = Context(args.build.resolve())
    chase = args.out / "chase"
    run("cc", "-O2", "-o", chase, ROOT / "bench/cpu/chase.c")
    print("bench/cpu: generating the video ...", file=sys.stderr)
    wanted = set(filter(None, args.classes.split(",")))
    cpu_classes = [c for c in (Compute, Server, Video, Wakeup, Bursty) if not wanted or c.key in wanted]
    cpu_classes = [c(seconds) if c is Video else c(args.cycles) if c is Bursty else c() for c in cpu_classes]
    memory = Memory(chase, 256 if args.quick else 1024)
    only = set(filter(None, args.only.split(",")))
    policies = [p(ctx) for p in all_policies() if not only or p.key in only]
    policies += [p(ctx) for p in extra_policies() if p.key in only]
    start_slice(FG_SLICE, [("CPUAccounting", "b", "true")])

    records, costs = [], []
    began = time.monotonic()
    try:
        for rep in range(args.reps):
            for policy in [Alone(ctx)] + policies:
                for kind, classes in (("cpu", cpu_classes), ("memory", [memory] if not wanted or "memory" in wanted else [])):
                    classes = [c for c in classes if policy.classes is None or c.key in policy.classes]
                    if not classes:
                        continue
                    print(f"bench/cpu: rep {rep + 1}/{args.reps}, {policy.label}, {kind} work "
                          f"({time.monotonic() - began:.0f} s)", file=sys.stderr)
                    policy.start(kind)
                    try:
                        # nicerd's own cost, at its defaults.
                        since = (pid_cpu_seconds(policy.pid), time.monotonic()) if policy.key == "nicer" else None
                        if kind == "cpu" and policy.key != "alone":
                            records.append(idle_machine(policy, args.settle, seconds, rep))
                        for cls in classes:
                            policy.before_class(cls.key)
                            time.sleep(args.settle)
                            records.append(trial(ctx, policy, cls, seconds, rep))
                            if policy.key == "nicer" and cls.key == "memory":
                                ctx.nicer_memory_share = records[-1]["window"]["work"]
                        if since:
                            costs.append(nicerd_cost(policy, since))
                    finally:
                        policy.stop()
    finally:
        stop_units(FG_SLICE)
        if started_manager:
            stop_user_manager(ROOT)
        (args.out / "results.json").write_text(json.dumps(
            {"cpus": NCPU, "reps": args.reps, "seconds": seconds, "settle": args.settle, "quick": args.quick,
             "policies": [[p.key, p.label] for p in [Alone(ctx)] + policies],
             "classes": [[c.key, c.label] for c in cpu_classes + [memory]],
             "records": records, "nicerd": costs, "minutes": (time.monotonic() - began) / 60}, indent=1))
    summary = report.summarize(json.loads((args.out / "results.json").read_text()))
    (args.out / "summary.md").write_text(summary)
    report.plot(json.loads((args.out / "results.json").read_text()), args.out)
    print(summary)
    print(f"bench/cpu: {(time.monotonic() - began) / 60:.1f} min; results in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
