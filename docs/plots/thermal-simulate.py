#!/usr/bin/python3
"""Draws docs/thermal-simulate.png: the temperature rule in `nicer simulate`'s thermal model.

Usage:  docs/plots/thermal-simulate.py NICER   (the nicer executable, e.g. build/app/cli/nicer)

An idle machine (the user away) for 10 minutes: only the work heats, toward 40 + gain x its share, on four
plants of the family the loop is made for (docs/controller.md, "Plants it was not tuned on"): time constants of
2 to 60 s, 20 to 60 °C at the whole machine; the rule holds 55 °C, which a share of 15 / gain keeps.
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


PLANTS = [(2, 60), (10, 40), (60, 20), (60, 60)]  # (tau s, gain °C)


def simulate(nicer, trace, tau, gain):
    out = subprocess.run([nicer, "simulate", "--trace", trace, "--thermal-gain", str(gain), "--thermal-ambient",
                          "40", "--thermal-tau", str(tau), "--temperature-target", "55"],
                         check=True, capture_output=True, text=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    return [float(r["temperature"]) for r in rows], [float(r["quota"]) for r in rows]


def main():
    nicer = sys.argv[1]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("0.95\n" * 600)
        trace = f.name
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 5))
    for tau, gain in PLANTS:
        temperature, quota = simulate(nicer, trace, tau, gain)
        line, = top.plot(temperature, label=f"tau {tau} s, +{gain} °C")
        bottom.plot([q * gain / 15 for q in quota], color=line.get_color())
    os.unlink(trace)
    top.axhline(55, color="grey", linestyle="--", linewidth=0.8)
    top.set_ylabel("CPU temperature (°C)")
    top.legend(loc="lower right", fontsize="small")
    bottom.axhline(1, color="grey", linestyle="--", linewidth=0.8)
    bottom.set_ylabel("cap / share the plant allows")
    bottom.set_xlabel("seconds")
    bottom.set_ylim(0, 2.0)
    top.set_title("nicer simulate: temperature target 55 °C, model 40 + gain x share")
    fig.tight_layout()
    fig.savefig(os.path.join(os.path.dirname(__file__), "..", "thermal-simulate.png"), dpi=90)


if __name__ == "__main__":
    main()
