#!/usr/bin/python3
"""Draws docs/thermal-simulate.png: the temperature rule in `nicer simulate`'s thermal model.

Usage:  docs/plots/thermal-simulate.py NICER   (the nicer executable, e.g. build/app/cli/nicer)

An idle machine (the user away) for 20 minutes: only the work heats, toward 40 + 60 x its share, with time
constants of 3, 10 and 30 s; the rule holds 70 °C, which a share of 0.5 keeps.
"""
import csv
import io
import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def simulate(nicer, trace, tau):
    out = subprocess.run([nicer, "simulate", "--trace", trace, "--thermal-gain", "60", "--thermal-ambient",
                          "40", "--thermal-tau", str(tau), "--temperature-target", "70"],
                         check=True, capture_output=True, text=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    return [float(r["temperature"]) for r in rows], [float(r["quota"]) for r in rows]


def main():
    nicer = sys.argv[1]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("0.95\n" * 300)
        trace = f.name
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 5))
    for tau in (3, 10, 30):
        temperature, quota = simulate(nicer, trace, tau)
        top.plot(temperature, label=f"tau {tau} s")
        bottom.plot(quota, label=f"tau {tau} s")
    os.unlink(trace)
    top.axhline(70, color="grey", linestyle="--", linewidth=0.8)
    top.set_ylabel("CPU temperature (°C)")
    top.legend(loc="lower right")
    bottom.axhline(0.5, color="grey", linestyle="--", linewidth=0.8)
    bottom.set_ylabel("the work's cap")
    bottom.set_xlabel("seconds")
    bottom.set_ylim(0, 1.05)
    top.set_title("nicer simulate: temperature target 70 °C, model 40 + 60 x share")
    fig.tight_layout()
    fig.savefig(os.path.join(os.path.dirname(__file__), "..", "thermal-simulate.png"), dpi=90)


if __name__ == "__main__":
    main()
