"""The Markdown report: medians over the repetitions and ratios of medians, one table per part, laid out as in
docs/bench-net.md's raw reports. Rates are bytes per second; None is a measurement that failed (n/a)."""

import statistics

MIB = 1024 * 1024


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(a, b):
    return f"{a / b:.3f}" if a is not None and b else "n/a"


def mbps(v):
    return f"{v * 8 / 1e6:.2f}" if v is not None else "n/a"


def mib(v):
    return f"{v / MIB:.1f}" if v is not None else "n/a"


def header(when, rate, burst, buffer_ms, loss, streams, reps, cc, loadavg):
    return (f"### Run {when}\n\n"
            f"Link {rate} (tbf, burst {burst} B, queue limit {buffer_ms} ms), loss {loss}%, no added delay; "
            f"K = {streams}; {reps} repetitions (median); congestion control {cc}; load average before: "
            f"{loadavg}.\n\n")


def idle_link(clients, tput, total_bytes, streams):
    """(a): @p tput maps each client to its throughputs."""
    ma, mc = median(tput["aria2c"]), median(tput["curl-h2"])
    out = [f"#### (a) Idle link: throughput to the last byte, {total_bytes // MIB} MiB in {streams} equal files",
           "",
           "| client | median Mbit/s | runs (Mbit/s) | vs aria2c (K HTTP/1.1 connections) | vs curl-h2 |",
           "|---|---|---|---|---|"]
    for c in clients:
        m = median(tput[c])
        out.append(f"| {c} | {mbps(m)} | {' '.join(map(mbps, tput[c]))} | {ratio(m, ma)} | {ratio(m, mc)} |")
    return "\n".join(out) + "\n\n"


def competing(clients, solo, fg, bg, fg_seconds, warmup):
    """(b): @p solo the foreground's rates alone, @p fg and @p bg map each client to the foreground's and its
    own rates meanwhile."""
    ms = median(solo)
    out = [f"#### (b) A competing foreground download (curl, one HTTP/1.1 connection, {fg_seconds} s, started "
           f"{warmup} s after the background client)",
           "",
           f"Foreground alone: {mbps(ms)} Mbit/s (median of: {' '.join(map(mbps, solo))}).",
           "",
           "| background client | foreground Mbit/s | foreground kept (vs alone) | runs (kept) | background Mbit/s "
           "meanwhile |",
           "|---|---|---|---|---|"]
    for c in clients:
        mf = median(fg[c])
        runs = " ".join(ratio(v, ms) for v in fg[c])
        out.append(f"| {c} | {mbps(mf)} | {ratio(mf, ms)} | {runs} | {mbps(median(bg[c]))} |")
    return "\n".join(out) + "\n\n"


def heavy_tail(files, total_bytes, streams, mean, last):
    """(c): @p files the tail set, @p mean and @p last map each nicer-ORDER[-nghttpd] client to its mean
    completion and last-byte seconds."""
    out = [f"#### (c) Heavy-tailed sizes: {len(files)} files, {total_bytes // MIB} MiB, bounded Pareto "
           f"(alpha 1.1), {streams} streams",
           "",
           "Sizes in manifest (FIFO) order, KiB: " + " ".join(str(size // 1024) for _, size in files),
           "",
           "| server | order | mean completion s | runs (s) | last byte s | SRPT / FIFO mean |",
           "|---|---|---|---|---|---|"]
    for server, suffix in (("nginx", ""), ("nghttpd", "-nghttpd")):
        srpt, fifo = median(mean[f"nicer-srpt{suffix}"]), median(mean[f"nicer-fifo{suffix}"])
        for order in ("srpt", "fifo"):
            c = f"nicer-{order}{suffix}"
            runs = " ".join(f"{v:.3f}" for v in mean[c])
            shown = ratio(srpt, fifo) if order == "srpt" else ""
            out.append(f"| {server} | {order} | {median(mean[c]):.3f} | {runs} | {median(last[c]):.3f} | {shown} |")
    return "\n".join(out) + "\n\n"


def boinc(modes, solo, runs, fg_seconds, boinc_warmup, version, input_bytes):
    """(d): @p runs maps each mode (defaults, nicer) to its runs' dicts (boinc.BoincRun.measure)."""
    ms = median(solo)
    out = [f"#### (d) BOINC's downloads and a competing foreground download (curl, one HTTP/1.1 connection, "
           f"{fg_seconds} s, started {boinc_warmup} s after BOINC's downloads began)",
           "",
           f"BOINC {version} downloads 4 work units of {input_bytes // MIB} MiB from the local test project (two "
           "transfers at a time, HTTP/1.1, zeros); \"before\" is BOINC's rate in the 5 s before the foreground "
           "starts, with the link to itself.",
           "",
           f"Foreground alone: {mbps(ms)} Mbit/s (median of: {' '.join(map(mbps, solo))}).",
           "",
           "| BOINC | foreground Mbit/s | foreground kept (vs alone) | runs (kept) | BOINC Mbit/s before | BOINC "
           "Mbit/s meanwhile | BOINC's receive buffers at the start, MiB (runs) | nicer's limit Mbit/s: at start, "
           "median, at end | held polls (runs) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for mode in modes:
        rs = runs[mode]

        def med(key):
            return median([r[key] for r in rs])

        mf = med("fg")
        kept = " ".join(ratio(r["fg"], ms) for r in rs)
        if mode == "nicer":
            name = "under nicer"
            limit = f"{mbps(med('limit_start'))}, {mbps(med('limit_median'))}, {mbps(med('limit_end'))}"
            held = " ".join(f"{r['held']}/{r['polls']}" for r in rs)
        else:
            name, limit, held = "defaults", "none", ""
        buffers = " ".join(mib(r["buffers"]) for r in rs)
        out.append(f"| {name} | {mbps(mf)} | {ratio(mf, ms)} | {kept} | {mbps(med('before'))} | "
                   f"{mbps(med('during'))} | {buffers} | {limit} | {held} |")
    return "\n".join(out) + "\n\n"
