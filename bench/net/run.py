#!/usr/bin/python3
"""How nicer's downloads compare with the usual clients on a shaped link, side by side in one run:
  (a) throughput on an idle link: nicer (1 connection, K HTTP/2 streams) vs aria2c (K HTTP/1.1 connections,
      same Metalink) and curl (K HTTP/2 streams multiplexed on one connection);
  (b) the share a competing foreground download (one curl HTTP/1.1 flow) keeps, relative to its throughput
      alone, while nicer, nicer --nice, aria2c or curl-h2 download in the background;
  (c) mean completion time of heavy-tailed files with nicer --order srpt vs --order fifo;
  (d) the same foreground's share while the real BOINC client (Debian's boinc-client) downloads work units
      from the local test project (tests/boinc/project), with BOINC's defaults and under nicerd, whose nice
      rate controller sets BOINC's max_bytes_sec_down.
Ratios of medians over repetitions; runs are interleaved so that drift (other load on the machine) hits every
client alike. docs/bench-net.md says what the figures mean.

The link: two network namespaces (server, client) joined by a veth pair (link.py); servers nginx and nghttpd
in the server namespace (servers.py); sparse files with real hashes (files.py); the clients (clients.py);
BOINC (boinc.py); the Markdown (report.py).

Needs root (namespaces, tc), nginx, nghttpd, curl, openssl; aria2c for (a) and (b), nft for --loss, and
`nicer fetch` in BUILD/app/cli (without it the nicer columns are skipped). (d) needs boinc, boinccmd, nsenter,
ss and, for its nicer row, BUILD/app/daemon/nicerd, `nicer boinc` and a systemd user manager
(tests/harness/user-manager.sh starts one when none runs, and stops it again). Prints Markdown to stdout (and
appends it to --out FILE); logs to stderr. Everything it creates is named after its PID and removed on exit,
also on Ctrl-C. Usage:

    bench/net/run.py [--rate 100mbit] [--reps 3] [--loss 0] [--build DIR] [--streams 10] [--buffer-ms 50]
                     [--fg-seconds 10] [--warmup 3] [--total-mb 100] [--cc cubic] [--only abcd]
                     [--boinc-warmup 20] [--out FILE] [--keep] [--hold]
"""

import argparse
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report  # noqa: E402
from boinc import Boinc  # noqa: E402
from clients import Clients  # noqa: E402
from files import FileSets  # noqa: E402
from link import SERVER_IP, Link, rate_bytes  # noqa: E402
from process import die, log, stop, succeeds  # noqa: E402
from servers import start_servers  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# The tools each part needs, with the Debian package that has them.
PACKAGES = {"ip": "iproute2", "tc": "iproute2", "ss": "iproute2", "nginx": "nginx-light",
            "nghttpd": "nghttp2-server", "curl": "curl", "openssl": "openssl", "aria2c": "aria2",
            "nft": "nftables", "boinc": "boinc-client", "boinccmd": "boinc-client", "nsenter": "util-linux",
            "systemctl": "systemd"}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("Usage:")[0].rstrip(" "),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", default="100mbit", help="the bottleneck's rate (tc: 20mbit, 100mbit, 1gbit)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions (medians are reported)")
    parser.add_argument("--loss", type=int, default=0, help="random loss on the client's ingress, percent")
    parser.add_argument("--build", type=Path, default=ROOT / "build", help="nicer's build directory")
    parser.add_argument("--streams", type=int, default=10, help="K: streams or connections of each client")
    parser.add_argument("--buffer-ms", type=int, default=50, help="the bottleneck's queue, in ms of the rate")
    parser.add_argument("--fg-seconds", type=int, default=10, help="how long the foreground download runs")
    parser.add_argument("--warmup", type=int, default=3, help="(b): seconds of background before the foreground")
    parser.add_argument("--total-mb", type=int, default=100, help="MiB of the (a) and (c) sets")
    parser.add_argument("--cc", default="cubic", help="the TCP congestion control of both sides")
    parser.add_argument("--only", default="abc", help="the parts to run, of a, b, c and d")
    parser.add_argument("--boinc-warmup", type=int, default=20,
                        help="(d): the foreground starts this many seconds after BOINC's downloads began (≥ 5)")
    parser.add_argument("--out", type=Path, help="also append the report to this file")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, manifests)")
    parser.add_argument("--hold", action="store_true",
                        help="set up the link, files and servers, print how to reach them, and wait until "
                             "interrupted")
    args = parser.parse_args()
    if os.geteuid() != 0:
        die("needs root for network namespaces, tc and nft: run it with sudo")
    if not re.fullmatch(r"[0-9]+[kmg]bit", args.rate):
        die(f"--rate '{args.rate}' must look like 20mbit, 100mbit or 1gbit")
    if not 0 <= args.loss < 100:
        die(f"--loss '{args.loss}' must be a whole percentage below 100")
    if args.streams < 1:
        die(f"--streams '{args.streams}' must be a positive number")
    if not re.fullmatch(r"[abcd]+", args.only):
        die(f"--only '{args.only}' must be made of a, b, c and d")
    if args.boinc_warmup < 5:
        die(f"--boinc-warmup '{args.boinc_warmup}' must be whole seconds, at least 5")
    tools = ["ip", "tc", "nginx", "nghttpd", "curl", "openssl"]
    if re.search("[ab]", args.only):
        tools.append("aria2c")
    if args.loss > 0:
        tools.append("nft")
    if "d" in args.only:
        tools += ["boinc", "boinccmd", "nsenter", "ss", "systemctl"]
    for tool in tools:
        if shutil.which(tool) is None:
            die(f"'{tool}' is missing: apt-get install {PACKAGES[tool]}")
    return args


def part_a(args, clients, names, files):
    tput = defaultdict(list)
    total = files.bytes("idle")
    for r in range(1, args.reps + 1):
        for c in names:
            seconds, _ = clients.run_to_end(c, "idle")
            tput[c].append(total / seconds)
            log(f"(a) rep {r} {c}: {report.mbps(tput[c][-1])} Mbit/s")
    return report.idle_link(names, tput, total, args.streams)


def part_b(args, clients, names, link):
    fg, bg, solo = defaultdict(list), defaultdict(list), []
    for r in range(1, args.reps + 1):
        link.quiet_client()
        solo.append(clients.foreground())
        log(f"(b) rep {r} foreground alone: {report.mbps(solo[-1])} Mbit/s")
        for c in names:
            f, b = clients.contended(c)
            fg[c].append(f)
            bg[c].append(b)
            log(f"(b) rep {r} with {c}: foreground {report.mbps(f)} Mbit/s ({report.ratio(f, solo[-1])} of alone), "
                f"{c} {report.mbps(b)} Mbit/s")
    return report.competing(names, solo, fg, bg, args.fg_seconds, args.warmup)


def part_c(args, clients, files):
    mean, last = defaultdict(list), defaultdict(list)
    for r in range(1, args.reps + 1):
        for c in ("nicer-srpt", "nicer-fifo", "nicer-srpt-nghttpd", "nicer-fifo-nghttpd"):
            seconds, m = clients.run_to_end(c, "tail")
            mean[c].append(m)
            last[c].append(seconds)
            log(f"(c) rep {r} {c}: mean completion {m:.3f} s, last byte {seconds:.3f} s")
    return report.heavy_tail(files.sets["tail"], files.bytes("tail"), args.streams, mean, last)


def part_d(args, clients, link, boinc):
    modes = boinc.modes()
    runs, solo = defaultdict(list), []
    mbps = report.mbps
    for r in range(1, args.reps + 1):
        link.quiet_client()
        solo.append(clients.foreground())
        log(f"(d) rep {r} foreground alone: {mbps(solo[-1])} Mbit/s")
        for m in modes:
            x = boinc.run(m, r)
            runs[m].append(x)
            limit = ""
            if m == "nicer":
                limit = (f", nicer's limit {mbps(x['limit_start'])} -> {mbps(x['limit_median'])} (median) -> "
                         f"{mbps(x['limit_end'])} Mbit/s, held {x['held']} of {x['polls']} polls")
            log(f"(d) rep {r} BOINC {m}: foreground {mbps(x['fg'])} Mbit/s ({report.ratio(x['fg'], solo[-1])} of "
                f"alone); BOINC {mbps(x['before'])} Mbit/s before, {mbps(x['during'])} meanwhile, receive "
                f"buffers {report.mib(x['buffers'])} MiB at the start{limit}")
    return report.boinc(modes, solo, runs, args.fg_seconds, args.boinc_warmup, boinc.version(), boinc.input_bytes)


def hold(link, work, nicer, streams):
    log(f"holding. Client namespace {link.client_ns}, server namespace {link.server_ns} ({SERVER_IP}), "
        f"work dir {work}:\n"
        f"  ip netns exec {link.client_ns} {nicer} fetch {work}/idle-h2.meta4 --dir /tmp/x --streams {streams} "
        "--nice\n"
        f"  ip netns exec {link.client_ns} curl -o /dev/null http://{SERVER_IP}/foreground.bin\n"
        f"Manifests: {work}/{{idle,bg,tail}}-{{h2,h1}}.meta4, tail-nghttpd.meta4. Interrupt (kill {os.getpid()}) "
        "to clean up.")
    while True:
        signal.pause()


def main():
    args = parse_args()
    args.build = args.build.resolve()
    nicer = args.build / "app/cli/nicer"
    have_nicer = os.access(nicer, os.X_OK) and succeeds([nicer, "fetch", "--help"])
    if not have_nicer:
        log(f"no working '{nicer} fetch' (build the 'nicer' target in {args.build}, or pass --build): nicer "
            "columns are skipped")
    bps = rate_bytes(args.rate)
    tag = os.getpid()
    link = Link(tag, args.rate, args.buffer_ms, args.loss, args.cc)
    work = Path(tempfile.mkdtemp(prefix="nicer-bench-net.", dir="/tmp"))
    servers, boinc = [], None
    # SIGTERM ends the run as Ctrl-C does, through the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        link.setup()
        files = FileSets(work, args.streams, args.total_mb, bps, args.warmup + args.fg_seconds)
        start_servers(link, work, servers)
        log(f"link: {args.rate} (tbf burst {link.burst} B, queue {args.buffer_ms} ms), loss {args.loss}%, "
            f"{args.streams} streams/connections, {args.reps} reps; work in {work}")
        if args.hold:
            hold(link, work, nicer, args.streams)

        clients = Clients(link, work, files, nicer, args.streams, args.fg_seconds, args.warmup)
        with open("/proc/loadavg") as f:
            loadavg = " ".join(f.read().split()[:3])
        text = report.header(time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), args.rate, link.burst, args.buffer_ms,
                             args.loss, args.streams, args.reps, args.cc, loadavg)
        names = (["nicer", "nicer-nice"] if have_nicer else []) + ["aria2c", "curl-h2"]
        if "a" in args.only:
            text += part_a(args, clients, names, files)
        if "b" in args.only:
            text += part_b(args, clients, names, link)
        if "c" in args.only:
            if have_nicer:
                text += part_c(args, clients, files)
            else:
                log("(c) needs nicer fetch: skipped")
        if "d" in args.only:
            boinc = Boinc(ROOT, link, work, clients, args.build, tag, args.fg_seconds, args.boinc_warmup, bps)
            text += part_d(args, clients, link, boinc)
        (work / "report.md").write_text(text)
        print(text, end="")
        if args.out:
            with open(args.out, "a") as out:
                out.write(text)
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        # A second Ctrl-C must not cut the cleanup short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if boinc:
            boinc.close()
        for process in servers:
            stop(process)
        link.teardown()
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
