"""bench/cpu's tables and plots from results.json: medians over the repetitions, as ratios to the foreground
alone, and the targets nicer's defaults are held to; for the foreground outside the user manager (and beside
it with --split-beside), the first seconds and the steady state side by side, as ratios to the foreground
alone in the same placement and phase ("Across the boundary")."""

import statistics
from collections import defaultdict

# (column title, class, metric, how): "slower" = alone / value (throughputs), "ratio" = value / alone
# (latencies), "value" = the median itself.
LOSS_COLUMNS = [
    ("compute ×", "compute", "ops_per_s", "slower"),
    ("server p50 ×", "server", "p50_ms", "ratio"),
    ("server p99 ×", "server", "p99_ms", "ratio"),
    ("video late %", "video", "late_pct", "value"),
    ("video speed", "video", "speed", "value"),
    ("wakeup p99 ×", "wakeup", "p99_us", "ratio"),
    ("wakeup p99.9 ×", "wakeup", "p999_us", "ratio"),
    ("memory ×", "memory", "steps_per_s", "slower"),
    ("bursty ×", "bursty", "ops_per_s", "slower"),
]
RECLAIM_CLASSES = ["idle", "compute", "server", "video", "wakeup", "memory", "bursty"]
# The two-phase foregrounds: (title, class, metric, how, phases).
PHASE_COLUMNS = [
    ("compute ×", "compute", "ops_per_s", "slower", ("onset", "steady")),
    ("server p99 ×", "server", "p99_ms", "ratio", ("onset", "steady")),
    ("wakeup p99 ×", "wakeup", "p99_us", "ratio", ("onset", "steady")),
    ("wakeup p99.9 ×", "wakeup", "p999_us", "ratio", ("steady",)),
]
PHASE_CLASSES = ["compute", "server", "wakeup"]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


class Results:
    """The records of one placement of the foreground (results without placements are all beside)."""

    def __init__(self, data, placement="beside"):
        self.data = data
        self.placement = placement
        self.labels = dict(data["policies"])
        self.policies = data.get("placement_policies", {}).get(placement, [key for key, _ in data["policies"]])
        self.by = defaultdict(list)
        for r in data["records"]:
            if r.get("placement", "beside") == placement:
                self.by[(r["policy"], r["class"])].append(r)

    def split(self):
        """Whether any foreground of this placement ran in two phases."""
        return any("phases" in r for records in self.by.values() for r in records)

    def phase_metric(self, policy, cls, name, phase):
        return median([r["phases"][phase]["metrics"].get(name) for r in self.by[(policy, cls)] if "phases" in r])

    def phase_loss(self, policy, cls, name, how, phase):
        """As loss(), for one phase, against the foreground alone in the same phase."""
        value = self.phase_metric(policy, cls, name, phase)
        alone = self.phase_metric("alone", cls, name, phase)
        if value is None or not alone:
            return None
        if how == "slower":
            return alone / value if value else float("inf")
        return value / alone

    def phase_share(self, policy, cls, phase, whose="work"):
        """The work's share of the machine in a phase, or the foreground cgroup's (whose="foreground")."""
        if whose == "work":
            return median([r["phases"][phase]["window"]["work"] for r in self.by[(policy, cls)]
                           if "phases" in r and r["phases"][phase]["window"]])
        return median([r["phases"][phase]["fg_share"] for r in self.by[(policy, cls)] if "phases" in r])

    def not_released(self, policy):
        """Trials whose work had not got its released share of the machine when the foreground started."""
        return sum(1 for (p, _), records in self.by.items() if p == policy for r in records
                   if (r.get("released") or {}).get("released") is False)

    def metric(self, policy, cls, name):
        return median([r["metrics"].get(name) for r in self.by[(policy, cls)]])

    def share(self, policy, cls, key="work"):
        return median([r["window"][key] for r in self.by[(policy, cls)] if r["window"]])

    def loss(self, policy, cls, name, how):
        value = self.metric(policy, cls, name)
        alone = self.metric("alone", cls, name)
        if value is None or (how != "value" and not alone):
            return None
        if how == "slower":
            return alone / value if value else float("inf")
        if how == "ratio":
            return value / alone
        return value

    def reclaimed(self, policy, cls):
        """The work's CPU over the CPU the foreground left idle when it ran alone (the whole machine for
        "idle")."""
        work = self.share(policy, cls)
        idle = 1.0 if cls == "idle" else self.share("alone", cls, "idle")
        # A foreground that leaves (next to) nothing idle leaves nothing to reclaim.
        if work is None or idle is None or idle < 0.02:
            return None
        return work / idle

    def recovery(self, policy):
        """Median over every burst of every repetition; a burst never recovered within its idle phase counts
        as the whole idle phase (and the count of those is returned too)."""
        values, missed = [], 0
        for r in self.by[(policy, "bursty")]:
            for v in r.get("recovery_s", []):
                values.append(5.0 if v is None else v)
                missed += v is None
        return (median(values), missed, len(values)) if values else (None, 0, 0)


def fmt(value, digits=2):
    if value is None:
        return "–"
    if value == float("inf"):
        return "∞"
    return f"{value:.{digits}f}"


def summarize(data):
    res = Results(data)
    policies = res.policies
    out = []
    mode = "quick, " if data["quick"] else ""
    out.append(f"Machine: {data['cpus']} CPUs. {mode}{data['reps']} repetition(s), each foreground "
               f"{data['seconds']} s; medians. Whole run: {data['minutes']:.0f} min.\n")
    for key, label, reason in data.get("skipped", []):
        out.append(f"Not run: {label} ({key}): {reason}.\n")
    if "beside" in data.get("placements", ["beside"]):
        out.append(beside_tables(data, res, policies))
        if res.split():
            out.append(phase_tables(data, res, "**Beside the work, first {onset} s and steady** (the foreground "
                                    "in benchfg.slice under the user manager, measured in two phases as across "
                                    "the boundary below; the tables above give the steady phase):"))
    for placement, where in PHASED_PLACEMENTS:
        if placement in data.get("placements", []):
            out.append(phase_tables(data, Results(data, placement), (
                where + "; × = ratio to the foreground alone there, in the same phase, 1.00 = no loss; first "
                "{onset} s: the foreground's first {onset} s, started once the work had had the machine to "
                "itself and its controller had released it; steady: the {seconds} s right after; work's share: "
                "of the whole machine, while the compute foreground ran):")))
    return "\n".join(out) + "\n"


# The placements whose foregrounds run in two phases, and what each table's title says of where they ran.
PHASED_PLACEMENTS = (
    ("outside", "**Across the boundary** (the foreground outside the user manager, in a root-level cgroup placed "
                "as system.slice is"),
    ("session", "**In the login session** (the foreground in benchuser/benchsession, the user manager's sibling "
                "under their parent, as a Cinnamon, XFCE or MATE desktop's session-N.scope is beside "
                "user@UID.service under user-UID.slice"),
)


def phase_tables(data, res, title):
    """The two-phase foregrounds of one placement: their loss in each phase, the shares of the machine the
    work and the foreground had, and the foregrounds alone."""
    onset, seconds = data.get("onset", 10), data["seconds"]
    first = f"first {onset:g} s"
    names = {"onset": first, "steady": "steady"}
    out = ["\n" + title.format(onset=f"{onset:g}", seconds=seconds) + "\n"]
    titles = [f"{t} {names[phase]}" for t, _, _, _, phases in PHASE_COLUMNS for phase in phases]
    titles += [f"work's share, {first}", "work's share, steady"]
    out.append("| policy | " + " | ".join(titles) + " |")
    out.append("|---|" + "---|" * len(titles))
    for p in res.policies:
        cells = [fmt(res.phase_loss(p, cls, name, how, phase))
                 for _, cls, name, how, phases in PHASE_COLUMNS for phase in phases]
        cells += [fmt(res.phase_share(p, "compute", phase)) for phase in ("onset", "steady")]
        missed = res.not_released(p)
        note = f" (work not released before {missed} trial(s))" if missed else ""
        out.append(f"| {res.labels[p]}{note} | " + " | ".join(cells) + " |")

    out.append("\n**The work's share of the machine / the foreground's**, by class and phase (medians; 1.00 = "
               "the whole machine; the foreground's from its cgroup's CPU time):\n")
    titles = [f"{cls} {names[phase]}" for cls in PHASE_CLASSES for phase in ("onset", "steady")]
    out.append("| policy | " + " | ".join(titles) + " |")
    out.append("|---|" + "---|" * len(titles))
    for p in res.policies:
        cells = [f"{fmt(res.phase_share(p, cls, phase))} / {fmt(res.phase_share(p, cls, phase, 'foreground'))}"
                 for cls in PHASE_CLASSES for phase in ("onset", "steady")]
        out.append(f"| {res.labels[p]} | " + " | ".join(cells) + " |")

    def both(cls, name, digits, unit):
        return (f"{fmt(res.phase_metric('alone', cls, name, 'onset'), digits)} / "
                f"{fmt(res.phase_metric('alone', cls, name, 'steady'), digits)} {unit}")

    out.append(f"\n**The foregrounds alone** here (medians, {first} / steady): compute "
               f"{both('compute', 'ops_per_s', 1, 'ops/s')}; server p99 {both('server', 'p99_ms', 3, 'ms')}; wakeup "
               f"p99 {both('wakeup', 'p99_us', 0, 'µs')}, p99.9 {both('wakeup', 'p999_us', 0, 'µs')}.")
    return "\n".join(out)


def beside_tables(data, res, policies):
    """The tables of the foreground beside the work, under the user manager."""
    out = []
    out.append("**Foreground loss** (× = ratio to the foreground alone, 1.00 = no loss; video: % of frames "
               "more than one frame late, and speed):\n")
    out.append("| policy | " + " | ".join(c[0] for c in LOSS_COLUMNS) + " |")
    out.append("|---|" + "---|" * len(LOSS_COLUMNS))
    for p in policies:
        cells = [fmt(res.loss(p, cls, name, how), 1 if cls == "video" and name == "late_pct" else 2)
                 for _, cls, name, how in LOSS_COLUMNS]
        out.append(f"| {res.labels[p]} | " + " | ".join(cells) + " |")

    out.append("\n**Background reclaimed** (the work's CPU over the CPU the foreground left idle when alone; "
               "idle: the work alone on the machine) and **after a burst** (median seconds until the work "
               "runs at 90% of the machine again):\n")
    out.append("| policy | " + " | ".join(RECLAIM_CLASSES) + " | after a burst, s |")
    out.append("|---|" + "---|" * (len(RECLAIM_CLASSES) + 1))
    for p in policies:
        if p == "alone":
            continue
        seconds, missed, bursts = res.recovery(p)
        after = fmt(seconds, 1) + (f" ({missed} of {bursts} not in 5 s)" if missed else "")
        out.append(f"| {res.labels[p]} | " + " | ".join(fmt(res.reclaimed(p, c)) for c in RECLAIM_CLASSES)
                   + f" | {after} |")

    out.append("\n**The foregrounds alone** (medians): " + "; ".join(
        f"{cls} {fmt(res.metric('alone', cls, name), 3)} {name}, idle left {fmt(res.share('alone', cls, 'idle'))}"
        for cls, name in [("compute", "ops_per_s"), ("server", "p99_ms"), ("video", "late_pct"),
                          ("wakeup", "p99_us"), ("memory", "steps_per_s"), ("bursty", "ops_per_s")]) + ".")
    out.append("Wakeup latency alone: p99 " + fmt(res.metric("alone", "wakeup", "p99_us"), 0) + " µs, p99.9 "
               + fmt(res.metric("alone", "wakeup", "p999_us"), 0) + " µs, max "
               + fmt(res.metric("alone", "wakeup", "max_us"), 0) + " µs.")

    costs = data.get("nicerd", [])
    if costs:
        core = median([c["cpu_s"] / c["seconds"] for c in costs])
        rss = max(c["rss_kib"] for c in costs) / 1024
        hwm = max(c["hwm_kib"] for c in costs) / 1024
        out.append(f"\n**nicerd's own cost** at the default period (1 s), over its "
                   f"{sum(c['seconds'] for c in costs) / 60:.1f} min of runs: {100 * core:.3f}% of one core "
                   f"({core * 3600:.1f} CPU-seconds per hour), RSS {rss:.1f} MiB (peak {hwm:.1f} MiB).")
        out.append("\n" + targets(res, core, hwm))
    return "\n".join(out)


def targets(res, core, hwm_mib_kib):
    p = "nicer"
    checks = []

    def check(what, value, ok, shown):
        checks.append(f"| {what} | {shown if value is not None else '–'} | "
                      f"{'met' if value is not None and ok else 'missed'} |")

    v = res.loss(p, "compute", "ops_per_s", "slower")
    check("compute-heavy loss ≤ 3%", v, v is not None and v <= 1.03, f"{fmt((v - 1) * 100 if v else None, 1)}%")
    for cls, name in (("server", "p99_ms"), ("wakeup", "p99_us")):
        v = res.loss(p, cls, name, "ratio")
        check(f"{cls} p99 ≤ 1.25× alone", v, v is not None and v <= 1.25, f"{fmt(v)}×")
    v = res.loss(p, "video", "late_pct", "value")
    check("late frames ≤ 1%", v, v is not None and v <= 1.0, f"{fmt(v, 1)}%")
    v = res.reclaimed(p, "idle")
    check("background ≥ 90% of the idle CPU (steady state)", v, v is not None and v >= 0.9, f"{fmt(v)}")
    v, missed, _ = res.recovery(p)
    check("after a burst, 90% back within 3 s", v, v is not None and v <= 3 and not missed, f"{fmt(v, 1)} s")
    idle = "idle-weight"
    worse = []
    for title, cls, name, how in LOSS_COLUMNS:
        a, b = res.loss(p, cls, name, how), res.loss(idle, cls, name, how)
        if a is not None and b is not None:
            # Lower is better for every column but video speed.
            if (a < b * 0.95) if name == "speed" else (a > b * 1.05 + (0.5 if how == "value" else 0)):
                worse.append(title)
    check("no class worse than CPUWeight=idle alone (5% slack)", 0, not worse,
          ", ".join(worse) if worse else "none worse")
    check("nicerd ≤ 0.2% of a core", core, core <= 0.002, f"{100 * core:.3f}%")
    hwm = hwm_mib_kib
    check("nicerd ≤ 10 MB RSS (peak)", hwm, hwm <= 10 * 1000 * 1000 / 1024 / 1024, f"{hwm:.1f} MiB")
    return "**Targets for nicer's defaults**:\n\n| target | measured | |\n|---|---|---|\n" + "\n".join(checks)


def plot(data, out):
    """The plots of the beside placement; without matplotlib, a note instead (the tables are written already)."""
    try:
        import matplotlib
    except ImportError:
        print("bench/cpu: no plots: install python3-matplotlib (packaging/dev.sh bench does); the tables are in "
              f"{out}/summary.md")
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = Results(data)
    policies = [key for key in res.policies if key != "alone"]
    labels = [res.labels[p] for p in policies]
    columns = [c for c in LOSS_COLUMNS if c[2] != "speed"]

    fig, axes = plt.subplots(2, 4, figsize=(16, 9), sharey=True)
    for ax, (title, cls, name, how) in zip(axes.flat, columns):
        values = [res.loss(p, cls, name, how) for p in policies]
        shown = [min(v, 10) if v is not None else 0 for v in values]
        colors = ["tab:green" if p.startswith("nicer") else "tab:gray" for p in policies]
        ax.barh(range(len(policies)), shown, color=colors)
        ax.axvline(0 if how == "value" else 1, color="black", linewidth=0.8)
        ax.set_title(title + (" (cut at 10)" if any(v and v > 10 for v in values) else ""))
        ax.set_yticks(range(len(policies)), labels)
        ax.invert_yaxis()
    fig.suptitle("Foreground loss by policy (1 = as fast as alone; video: % late frames); nicer in green")
    fig.tight_layout()
    fig.savefig(out / "bench-cpu-loss.png", dpi=80)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(12, 6))
    width = 0.8 / len(policies)
    for i, p in enumerate(policies):
        values = [res.reclaimed(p, c) or 0 for c in RECLAIM_CLASSES]
        ax.bar([x + i * width for x in range(len(RECLAIM_CLASSES))], values, width, label=res.labels[p])
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(RECLAIM_CLASSES))], RECLAIM_CLASSES)
    ax.set_ylabel("work's CPU / CPU left idle by the foreground alone")
    ax.axhline(0.9, color="black", linewidth=0.8, linestyle="--")
    ax.legend(fontsize=8, ncol=2)
    ax.set_title("Background reclaimed (dashed: the 90% target)")
    fig.tight_layout()
    fig.savefig(out / "bench-cpu-reclaimed.png", dpi=80)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(12, 5))
    for p in ["idle-weight", "boinc", "sideloader", "nicer-thesis", "nicer-before", "nicer-window-100ms", "nicer",
              "nicer-band8"]:
        runs = res.by[(p, "bursty")]
        if not runs or "timeline" not in runs[0]:
            continue
        line = runs[0]["timeline"]
        xs, ys = [], []
        for (t0, c0), (t1, c1) in zip(line, line[5:]):
            xs.append(t1)
            ys.append((c1 - c0) / ((t1 - t0) * data["cpus"]))
        ax.plot(xs, ys, label=res.labels[p], linewidth=1.2 if p.startswith("nicer") else 0.8)
    ax.set_xlabel("seconds (the foreground is busy for 5 s, then idle for 5 s)")
    ax.set_ylabel("work's share of the machine")
    ax.legend(fontsize=8)
    ax.set_title("The bursty foreground: how fast the work gets the CPU back (first repetition)")
    fig.tight_layout()
    fig.savefig(out / "bench-cpu-burst.png", dpi=80)
    plt.close(fig)
