#!/usr/bin/python3
"""Does the user feel the volunteer work? Every foreground class against every background policy a volunteer
could pick, measured in one run on this machine, as ratios to the foreground alone.

Each repetition runs, for each placement of the foreground, the foregrounds alone (the baseline), then each
policy with its work set up on the real user manager (or, for Debian's service, outside it).

- beside (the foreground in benchfg.slice under the user manager, a sibling of the work's slice): the work
  fills the machine for a while (the "idle machine" figure), then each foreground runs in turn.
- outside (the foreground in benchsys, a root-level cgroup placed as system.slice is, outside the user
  manager): the compute, server and wakeup foregrounds, each as two phases back to back, once the work had
  the machine to itself and its controller released it: the first ONSET seconds (--onset, 10) and the steady
  state (--seconds) right after, each with its own yardstick, the foreground cgroup's CPU time and the
  work's share of the machine ("Across the boundary" in the summary). --split-beside measures beside's
  compute, server and wakeup so too (its tables then give the steady phase).

Medians over the repetitions go to OUT/summary.md (Markdown), the raw trials to OUT/results.json and the plots
(of the beside placement) to OUT/*.png (matplotlib). docs/benchmarks.md says what the figures mean and how to
re-run them.

Needs root (the private user manager of tests/harness, as the tests use, and the root-level cgroups) and the
packages that `packaging/dev.sh bench` installs. Usage:

    bench/cpu/run.py [--build DIR] [--quick] [--reps N] [--seconds S] [--settle S] [--cycles N]
                     [--only POLICY,...] [--classes CLASS,...] [--placements beside,outside]
                     [--onset S] [--split-beside] [--out DIR]
"""

import argparse
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from foregrounds import (BESIDE, FG_SLICE, MANAGER_CGROUP, Bursty, Compute, Memory, Outside, Server,  # noqa: E402
                         Session, Video, Wakeup, recovery_seconds)
from machine import (NCPU, NoWork, Sampler, pid_cpu_seconds, pid_memory_kib, run, stop_user_manager,  # noqa: E402
                     user_manager_env, window)
from policies import all_policies, extra_policies, start_slice, stop_units  # noqa: E402
import report  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PLACEMENTS = ("beside", "outside", "session")
SPLIT_CLASSES = ("compute", "server", "wakeup")  # the classes measured in two phases
# --quick (without --only): the policies of each placement (with the baseline), so that it stays at about 10
# minutes, as before the outside placement (a policy beside takes about 45 s there, outside about 35 s):
# beside without the earlier set-ups of nicer and without the rows that quick measures outside instead; and
# the first phase, in seconds.
QUICK = {
    "beside": ("same-weight", "nice19", "idle-weight", "cpu-idle-v1", "static", "boinc", "sideloader",
               "nicer-thesis", "nicer", "nicer-cpu-idle-v1", "concurrency"),
    "outside": ("idle-weight", "debian-service", "root-idle", "nicer"),
    "session": ("idle-weight", "root-idle", "nicer"),
}
QUICK_ONSET = 5


class Alone:
    """The baseline: the foreground with no background at all."""

    key = "alone"
    label = "none (foreground alone)"
    classes = None
    placements = PLACEMENTS
    released_share = None

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
        self.nicerd_help = run(self.nicerd, "--help", check=False)


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


def wait_released(policy, sampler, timeout=30.0):
    """Waits until the work has had its released share (policy.released_share) of the CPU the rest of the
    machine leaves it (the work's and the idle time) over the last second, as after its controller let it
    have the machine again; at most @p timeout seconds. What it had then (of that room, and of the whole
    machine), how long that took, and whether it got there."""
    if policy.released_share is None:
        time.sleep(0.2)
        return None
    began = time.monotonic()
    while True:
        time.sleep(0.2)
        now = time.monotonic()
        last = window(list(sampler.samples), now - 1.05)
        share = of_room = None
        if last and last["seconds"] >= 0.9:
            share = last["work"]
            room = last["work"] + last["idle"]
            of_room = share / room if room > 0.02 else 0.0
        if of_room is not None and of_room >= policy.released_share:
            return {"share": share, "of_room": of_room, "waited_s": now - began, "released": True}
        if now - began > timeout:
            print(f"bench/cpu: {policy.label}: the work had {of_room or 0:.2f} of the CPU left to it after "
                  f"{timeout:.0f} s, not {policy.released_share}: measuring anyway", file=sys.stderr)
            return {"share": share, "of_room": of_room, "waited_s": now - began, "released": False}


def split_trial(ctx, policy, cls, placement, lengths, rep):
    """A foreground run as two phases back to back (cls.run_phases), the first ONSET seconds then the steady
    state, started once the work was released: each phase's yardstick, the work's share of the machine and
    the foreground cgroup's. The record's metrics and window are the steady phase's."""
    placement.cpu_usec()  # finds the cgroup before the clock starts
    sampler = Sampler(policy.work)
    sampler.start()
    released = wait_released(policy, sampler)
    marks = []

    def mark():
        marks.append((time.monotonic(), placement.cpu_usec()))

    metrics = cls.run_phases(ctx, lengths, placement, mark)
    samples = sampler.stop()
    phases = {}
    for i, name in enumerate(("onset", "steady")):
        (t0, u0), (t1, u1) = marks[2 * i], marks[2 * i + 1]
        phases[name] = {"metrics": metrics[i], "window": window(samples, t0, t1), "seconds": t1 - t0,
                        "fg_cpu_s": (u1 - u0) / 1e6, "fg_share": (u1 - u0) / 1e6 / ((t1 - t0) * NCPU)}
    if policy.key == "alone":
        ctx.peak_share[cls.key] = max(ctx.peak_share.get(cls.key, 0.0), peak_share(samples))
    return {"rep": rep, "policy": policy.key, "class": cls.key, "placement": placement.key,
            "metrics": phases["steady"]["metrics"], "window": phases["steady"]["window"], "phases": phases,
            "released": released, "gap_s": marks[2][0] - marks[1][0]}


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


def run_policy(ctx, args, policy, placement, cpu_classes, memory, rep, records, costs, began):
    """One policy in one placement: its work started, the foregrounds of the placement one after the other,
    its work stopped."""
    beside = placement.key == "beside"
    split = set(SPLIT_CLASSES) if args.split_beside or not beside else set()
    lengths = [args.onset, args.seconds]
    wanted = set(filter(None, args.classes.split(",")))
    for kind, classes in (("cpu", cpu_classes),
                          ("memory", [memory] if beside and (not wanted or "memory" in wanted) else [])):
        classes = [c for c in classes if (policy.classes is None or c.key in policy.classes)
                   and (beside or c.key in split)]
        if not classes:
            continue
        print(f"bench/cpu: rep {rep + 1}/{args.reps}, {placement.key}, {policy.label}, {kind} work "
              f"({time.monotonic() - began:.0f} s)", file=sys.stderr)
        policy.start(kind)
        try:
            # nicerd's own cost, at its defaults.
            since = (pid_cpu_seconds(policy.pid), time.monotonic()) if policy.key == "nicer" and beside else None
            if kind == "cpu" and policy.key != "alone" and beside:
                records.append(idle_machine(policy, args.settle, args.seconds, rep))
            for cls in classes:
                policy.before_class(cls.key)
                time.sleep(args.settle)
                if cls.key in split:
                    records.append(split_trial(ctx, policy, cls, placement, lengths, rep))
                else:
                    records.append(trial(ctx, policy, cls, args.seconds, rep))
                if policy.key == "nicer" and cls.key == "memory":
                    ctx.nicer_memory_share = records[-1]["window"]["work"]
            if since:
                costs.append(nicerd_cost(policy, since))
        finally:
            policy.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build", help="nicer's build directory")
    parser.add_argument("--quick", action="store_true",
                        help="one repetition of short runs (about 10 minutes), the first phase "
                        f"{QUICK_ONSET} s; without --only, beside runs {', '.join(QUICK['beside'])} and outside "
                        f"{', '.join(QUICK['outside'])} (and the baseline)")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (medians are reported)")
    parser.add_argument("--seconds", type=float, default=10, help="seconds each foreground runs")
    parser.add_argument("--settle", type=float, default=3, help="seconds the work has before each foreground")
    parser.add_argument("--cycles", type=int, default=2, help="busy/idle cycles of the bursty foreground")
    parser.add_argument("--only", default="",
                        help="comma-separated policy keys to run (the baseline always runs), in every placement "
                        "asked for; without it each placement runs its own set")
    parser.add_argument("--classes", default="", help="comma-separated foreground classes to run (default: all; "
                        f"outside the user manager only {', '.join(SPLIT_CLASSES)})")
    parser.add_argument("--placements", default=",".join(PLACEMENTS),
                        help="where the foreground runs, comma-separated: beside (benchfg.slice, under the user "
                        "manager, beside the work's slice) and outside (benchsys, a root-level cgroup placed as "
                        "system.slice is); default: both")
    parser.add_argument("--onset", type=int, default=10,
                        help="seconds of the first phase of a two-phase foreground (outside, and beside with "
                        "--split-beside); the steady phase after it runs --seconds")
    parser.add_argument("--split-beside", action="store_true",
                        help="beside too, run the compute, server and wakeup foregrounds in two phases (the "
                        "beside tables then give the steady phase)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/nicer-bench-cpu"), help="where results go")
    args = parser.parse_args()
    if args.quick:
        args.reps, args.seconds, args.settle, args.cycles, args.onset = 1, 3, 1.5, 1, QUICK_ONSET
    seconds = args.seconds = int(args.seconds)
    placements = [p for p in args.placements.split(",") if p]
    if not placements or any(p not in PLACEMENTS for p in placements):
        sys.exit(f"bench/cpu: --placements takes {', '.join(PLACEMENTS)}, not '{args.placements}'")
    if args.onset < 1:
        sys.exit("bench/cpu: --onset is at least 1 s")
    for tool in ("stress-ng", "wrk", "nginx", "ffmpeg", "cyclictest", "curl", "busctl", "cc"):
        if shutil.which(tool) is None:
            sys.exit(f"bench/cpu: '{tool}' is missing: `packaging/dev.sh bench` installs what this needs")
    if not (args.build / "app/daemon/nicerd").exists():
        sys.exit(f"bench/cpu: no nicerd in {args.build}: build nicer first (packaging/dev.sh build)")
    args.out.mkdir(parents=True, exist_ok=True)
    # SIGTERM and SIGHUP end the run as Ctrl-C does, through the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(130))
    outside, session = Outside(), Session()
    ctx, policies, skipped, rows, cpu_classes, memory = None, [], [], {}, [], None
    records, costs = [], []
    began = time.monotonic()
    # With the session placement the user manager runs below a parent of its own, beside the session.
    manager_cgroup = MANAGER_CGROUP if "session" in placements else None
    env, started_manager = user_manager_env(ROOT, manager_cgroup)
    try:
        os.environ.update(env)
        ctx = Context(args.build.resolve())
        chase = args.out / "chase"
        run("cc", "-O2", "-o", chase, ROOT / "bench/cpu/chase.c")
        wanted = set(filter(None, args.classes.split(",")))
        cpu_classes = [c for c in (Compute, Server, Video, Wakeup, Bursty) if (not wanted or c.key in wanted)
                       and ("beside" in placements or c.key in SPLIT_CLASSES)]
        if Video in cpu_classes:
            print("bench/cpu: generating the video ...", file=sys.stderr)
        cpu_classes = [c(seconds) if c is Video else c(args.cycles) if c is Bursty else c() for c in cpu_classes]
        memory = Memory(chase, 256 if args.quick else 1024)
        only = set(filter(None, args.only.split(",")))
        policies = [p(ctx) for p in all_policies() if not only or p.key in only]
        policies += [p(ctx) for p in extra_policies() if p.key in only]
        for policy in list(policies):
            reason = policy.unavailable(ctx)
            if reason:
                print(f"bench/cpu: skipping '{policy.label}': {reason}", file=sys.stderr)
                skipped.append([policy.key, policy.label, reason])
                policies.remove(policy)
        where = {"beside": BESIDE, "outside": outside, "session": session}
        # Each placement's rows: its own set, or every policy --only names.
        for p in placements:
            chosen = [q for q in policies if (p in q.placements or only)
                      and not (args.quick and not only and q.key not in QUICK[p])]
            rows[p] = [Alone(ctx)] + chosen

        began = time.monotonic()
        if "beside" in placements:
            start_slice(FG_SLICE, [("CPUAccounting", "b", "true")])
        if "outside" in placements:
            outside.root.create()
        if "session" in placements:
            session.root.create()
        for rep in range(args.reps):
            for p in placements:
                for policy in rows[p]:
                    run_policy(ctx, args, policy, where[p], cpu_classes, memory, rep, records, costs, began)
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        # A second Ctrl-C must not cut the cleanup short.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        for placement in (outside, session):
            try:
                placement.root.remove()
            except (OSError, RuntimeError) as e:
                print(f"bench/cpu: WARNING: could not remove {placement.root.cgroup}: {e}", file=sys.stderr)
        stop_units(FG_SLICE)
        if started_manager:
            stop_user_manager(ROOT, manager_cgroup)
        (args.out / "results.json").write_text(json.dumps(
            {"cpus": NCPU, "reps": args.reps, "seconds": seconds, "settle": args.settle, "quick": args.quick,
             "onset": args.onset, "split_beside": args.split_beside, "placements": placements,
             "policies": [[p.key, p.label] for p in [Alone(ctx)] + policies],
             "placement_policies": {p: [q.key for q in rows[p]] for p in rows},
             "skipped": skipped,
             "classes": [[c.key, c.label] for c in cpu_classes + ([memory] if memory else [])],
             "records": records, "nicerd": costs, "minutes": (time.monotonic() - began) / 60}, indent=1))
    summary = report.summarize(json.loads((args.out / "results.json").read_text()))
    (args.out / "summary.md").write_text(summary)
    if "beside" in placements:
        report.plot(json.loads((args.out / "results.json").read_text()), args.out)
    print(summary)
    print(f"bench/cpu: {(time.monotonic() - began) / 60:.1f} min; results in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
