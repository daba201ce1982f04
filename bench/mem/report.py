#!/usr/bin/env python3
"""The memory bench's table (docs/benchmarks.md, "The memory class") from the guest's JSON lines.

Usage: report.py BENCH.jsonl

Per policy, medians over the repetitions: the program's pass time (the mean of a run's passes; and its first
pass, the one that meets the work's memory) and its PSI
"full" stall, each also as a ratio to the program alone in the same run; the work's CPU seconds per second
before the program starts, as a ratio to the work without any limit ("none"); the OOM kills, of the work and
of anything else. Then the issue's targets for the memory rule, each met or not.
"""
import json
import statistics
import sys


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(value, base):
    return None if value is None or not base else value / base


def cell(value, digits=2, suffix=""):
    return "–" if value is None else f"{value:.{digits}f}{suffix}"


def targets(rule, alone, none):
    checks = [
        ("pass time ≤ 1.2× alone", ratio(rule["pass"], alone["pass"]), lambda v: v <= 1.2),
        ("PSI full ≤ 2× alone", ratio(rule["stall"], alone["stall"]), lambda v: v <= 2.0),
        ("work throughput ≥ 0.9 of none's", ratio(rule["cpu"], none.get("cpu")), lambda v: v >= 0.9),
    ]
    for name, value, good in checks:
        verdict = "not measured" if value is None else ("met" if good(value) else "MISSED")
        if value is None and name.startswith("PSI") and alone.get("stall") == 0 and rule["stall"] is not None:
            # Alone waits 0 s: only 0 is within any multiple of it.
            value, verdict = rule["stall"], "met" if rule["stall"] == 0 else "MISSED: alone waits 0 s"
            name += " (the stall in s against alone's 0)"
        print(f"- {name}: {cell(value)} ({verdict})")
    print(f"- no OOM kill but the work's: {'met' if rule['kills_other'] == 0 else 'MISSED'} "
          f"({rule['kills_work']} of the work, {rule['kills_other']} other)")


def main():
    runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    policies = list(dict.fromkeys(r["policy"] for r in runs))
    by = {p: [r for r in runs if r["policy"] == p] for p in policies}
    summary = {}
    for policy, rs in by.items():
        summary[policy] = {
            "pass": median(statistics.mean(r["pass_s"]) if r.get("pass_s") else None for r in rs),
            "first": median(r["pass_s"][0] if r.get("pass_s") else None for r in rs),
            "stall": median(r.get("full_stall_s") for r in rs),
            "cpu": median(r.get("work_cpu") for r in rs),
            "kills_work": sum(r["oom_kills_work"] for r in rs),
            "kills_other": sum(r["oom_kills_other"] for r in rs),
            "failed": sum(1 for r in rs if "program_failed" in r),
            "runs": len(rs),
        }
    alone, none = summary.get("alone", {}), summary.get("none", {})
    mib = runs[0]["program_mib"] if runs else 0
    swap = runs[0].get("swap_mib", 0) if runs else 0
    kind = "a zram swap device" if runs and runs[0].get("swap_kind") == "zram" else "a swap file"
    print(f"The program's working set: {mib} MiB; the work: 2 × 350 MiB; "
          f"{f'{kind} of {swap} MiB' if swap else 'no swap'}. Medians of "
          f"{max((s['runs'] for s in summary.values()), default=0)} repetitions.\n")
    print("| policy | pass s | pass × alone | first pass s | full stall s | stall × alone | work CPU/s "
          "| work × none | OOM kills: work / other | program failed |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for policy, s in summary.items():
        print(f"| {policy} | {cell(s['pass'])} | {cell(ratio(s['pass'], alone.get('pass')))} "
              f"| {cell(s['first'])} "
              f"| {cell(s['stall'], 3)} | {cell(ratio(s['stall'], alone.get('stall')))} "
              f"| {cell(s['cpu'])} | {cell(ratio(s['cpu'], none.get('cpu')))} "
              f"| {s['kills_work']} / {s['kills_other']} | {s['failed']} of {s['runs']} |")
    for name in ("rule", "default"):
        if name in summary and alone:
            print(f"\nThe issue's targets, for {name}:")
            targets(summary[name], alone, none)
    return 0


if __name__ == "__main__":
    sys.exit(main())
