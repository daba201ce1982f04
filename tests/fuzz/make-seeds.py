#!/usr/bin/python3
"""Writes the seed corpora of tests/fuzz/corpus/ (except Http2Session's: make_http2_seeds.cpp records those).

Usage:  tests/fuzz/make-seeds.py [--proc]

The seeds are the repository's own fixtures (tests/data, tests/boinc/replies) and a few hand-made inputs in
each target's format. Targets that read their input with libFuzzer's FuzzedDataProvider take strings from the
front (a backslash and any other byte end one; two backslashes are one) and numbers and flags from the back,
one byte each here. --proc adds this machine's /proc/stat, /proc/net/dev and the cgroup lines of
/proc/self/mountinfo (only those: the rest names this machine's private mounts).
"""

import pathlib
import shutil
import sys

tests = pathlib.Path(__file__).resolve().parent.parent
corpus = tests / "fuzz" / "corpus"


def seed(target, name, data):
    directory = corpus / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def copy(target, files, rename=None):
    for path in sorted(files):
        if path.suffix in (".md", ".py"):
            continue
        seed(target, rename(path) if rename else path.name, path.read_bytes())


def fdp_string(text):
    """A string as FuzzedDataProvider.ConsumeRandomLengthString reads it, ended by a backslash and '|'."""
    data = text.encode() if isinstance(text, str) else text
    return data.replace(b"\\", b"\\\\") + b"\\|"


def tail(*values):
    """Bytes read from the back, one each, in the order the target reads them (so written reversed)."""
    return bytes(reversed(values))


# /proc/stat: files alone, and pairs of reads split by a form feed.
procstat = tests / "data" / "procstat"
copy("ProcStat", procstat.glob("*.txt"))
for before, after in [("four-cpus-t0", "four-cpus-t1"), ("four-cpus-t1", "backwards-t1"),
                      ("hotplug-cpu2-offline-t1", "hotplug-cpu2-online-t2")]:
    seed("ProcStat", f"pair-{before}-{after}",
         (procstat / f"{before}.txt").read_bytes() + b"\f" + (procstat / f"{after}.txt").read_bytes())

copy("NetDev", (tests / "data" / "netdev").glob("*.txt"))
copy("CgroupLayout", (tests / "data" / "mountinfo").glob("*.txt"))
copy("Metalink", (tests / "data" / "metalink").iterdir())
copy("GuiRpcReplies", (tests / "boinc" / "replies").iterdir())

# The cgroup files: cpu.max, cpu.stat, cpu.cfs_quota_us, cpu.cfs_period_us, cpuacct.usage, cgroup.procs, a
# child's cgroup.procs and the v1 cpu hierarchy's cpu.stat; then (from the back) the layout (0 v2, 1 v1,
# 2 hybrid) and whether the child has one.
cpu_stat = "usage_usec 183412\nuser_usec 120000\nsystem_usec 63412\nnr_periods 10\nnr_throttled 2\n"
v1_cpu_stat = "nr_periods 7341\nnr_throttled 212\nthrottled_time 4123456789\n"
for name, kind, files in [
        ("v2-quota", 0, ["50000 100000\n", cpu_stat, "", "", "", "1234\n5678\n", "91011\n", ""]),
        ("v2-max", 0, ["max 100000\n", cpu_stat, "", "", "", "", "", ""]),
        ("v1-quota", 1, ["", "", "25000\n", "100000\n", "98765432100\n", "42\n42\n7\n", "8\n", v1_cpu_stat]),
        ("v1-none", 1, ["", "", "-1\n", "100000\n", "0\n", "", "", ""]),
        ("hybrid", 2, ["", cpu_stat, "150000\n", "100000\n", "5\n", "300\n", "301\n302\n", v1_cpu_stat])]:
    seed("CgroupFiles", name, b"".join(fdp_string(f) for f in files) + tail(kind, 1))
# Found with the target's invariant: a usage_usec whose ns wrapped around.
seed("CgroupFiles", "crash-usage-overflow",
     b"".join(fdp_string(f) for f in ["", "usage_usec 18446744073709552\n", "", "", "", "1\n", "", ""])
     + tail(0, 0))

# The parameters: byte 0 picks the file (0), one "key=value" (1) or a ControllerParams' bytes (2).
seed("ParameterText", "file", "\0# Controller parameters set at run time (nicer set, the tray). "
     "Written by nicerd.\n"
     "reserve-band = 0.05\nmin-multiplier = 1\nmax-multiplier = 16\noverload-threshold = 4\n"
     "idle-epsilon = 0\nperiod = 1\n")
seed("ParameterText", "file-partial", "\0period = 0.25 # quarter of a second\nreserve-band=0.2\n")
for key, value in [("reserve-band", "0.1"), ("overload-threshold", "6"), ("period", "0.0015"),
                   ("idle-epsilon", "1e-3"), ("max-multiplier", "64"),
                   ("temperature-target", "75"), ("fan-target", "3000"), ("battery-cap", "0.3")]:
    seed("ParameterText", f"one-{key}", f"\x01{key}={value}")
# Inside temperature-target's gap above 0 (CI's fuzzer found validate() and inRange() disagreeing there).
seed("ParameterText", "one-temperature-target-gap", "\x01temperature-target=2")
seed("ParameterText", "params", b"\x02" + bytes(range(64)))

seed("WorkloadState", "boinc", "# The workload chosen at run time (nicer workload, the tray). "
     "Written by nicerd.\n"
     "preset = boinc\n")
seed("WorkloadState", "custom", "preset=custom\n")
seed("WorkloadState", "programs", "# The programs that pause the work while they run, set at run time. "
     "Written by nicerd.\nprograms = blender steam\n")
seed("WorkloadState", "programs-none", "programs =\n")
seed("WorkloadState", "demo-comment", "\n  # chosen by hand\npreset = demo # the default\n")

# URLs: the URL, a reference to resolve against it, then a name for the download directory.
for name, url, reference, file in [
        ("plain", "https://example.org/units/a.bin", "/units/b.bin?x=1", "units/a.bin"),
        ("port-ipv6", "http://[::1]:8080/path?q#frag", "../up/./x", "dir/sub/file.dat"),
        ("relative", "HTTPS://Mirror.Example.ORG:443", "//other.example.org/p", "a%2e%2e/b"),
        ("strays", "http://example.org/a b", "https://example.org/ä{x}", "../escape"),
        ("query-only", "http://example.org/dir/file", "?page=2", "file.part")]:
    seed("Url", name, fdp_string(url) + fdp_string(reference) + file.encode())

# Header values, with "now" (five bytes from the back) at zero: 1970.
for name, value in [("range", "bytes 0-99/100"), ("range-unknown", "bytes 100-199/*"),
                    ("range-unsatisfied", "bytes */1000"), ("length", "42, 42"),
                    ("retry-seconds", "120"), ("retry-imf", "Sun, 06 Nov 1994 08:49:37 GMT"),
                    ("retry-rfc850", "Sunday, 06-Nov-94 08:49:37 GMT"),
                    ("retry-asctime", "Sun Nov  6 08:49:37 1994"),
                    # Found by the target: a year system_clock's nanoseconds cannot hold overflowed.
                    ("crash-year-1294", "Sun, 06 Nov 1294 08:49:37 GMT")]:
    seed("HttpHeaders", name, value.encode() + bytes(5))

# D-Bus arguments: (from the back) the method: 1 BOINC, then whether the URL gets "https://" in front;
# 2 SetWorkloadPreset, the id being the rest.
seed("DbusArguments", "boinc-attach", fdp_string("https://einstein.phys.uwm.edu/")
     + fdp_string("0123456789abcdef")
     + fdp_string("secret pass") + tail(1, 0))
seed("DbusArguments", "boinc-account-manager", fdp_string("bam.boincstats.com/") + fdp_string("volunteer")
     + fdp_string("pa&ss<w>rd") + tail(1, 1))
# Found by the target: a \003 in the password ended the GUI RPC request early.
seed("DbusArguments", "crash-account-manager-etx", fdp_string("https://bam.boincstats.com/")
     + fdp_string("me")
     + fdp_string("pw\x03<boinc_gui_rpc_request><quit/>") + tail(1, 0))
for preset in ["demo", "boinc", "folding", "custom"]:
    seed("DbusArguments", f"preset-{preset}", preset.encode() + tail(2))
# SetParameters: the entry count, then per entry: a table name (flag), its index, the kind of value, the
# value.
seed("DbusArguments", "parameters-period", tail(0, 1, 1, 5, 3, 0, 250) + bytes(8))

# The GUI RPC stream: replies ended by \x03, cut by a limit (two bytes from the back: 1000), appended in
# pieces.
replies = tests / "boinc" / "replies"
stream = b"".join((replies / f).read_bytes() + b"\x03" for f in ["auth1.xml", "auth2-authorized.xml",
                                                                 "get_cc_status.xml"])
seed("GuiRpcProtocol", "replies", b"".join(fdp_string(stream[i:i + 90]) for i in range(0, len(stream), 90))
     + b"<project_attach>\n" + tail(0x03, 0xe8, *([2] * (len(stream) // 90 + 1))))

# The preferences override: the file's text, then (from the back) the limits: down in range, its value,
# up's value.
for path in ["get_global_prefs_override.xml", "own-get_global_prefs_override.xml",
             "own-get_global_prefs_override-stray-text.xml"]:
    text = (replies / path).read_bytes()
    inner = text.split(b"<boinc_gui_rpc_reply>", 1)[-1].rsplit(b"</boinc_gui_rpc_reply>", 1)[0].strip()
    seed("GlobalPrefsOverride", path.replace(".xml", ""), inner + tail(0, *([0x80] * 8), *([0x40] * 8)))
seed("GlobalPrefsOverride", "empty", tail(0, *([0x10] * 8), *([0x20] * 8)))

if "--proc" in sys.argv[1:]:
    seed("ProcStat", "self-proc-stat", pathlib.Path("/proc/stat").read_bytes())
    seed("NetDev", "self-proc-net-dev", pathlib.Path("/proc/net/dev").read_bytes())
    lines = pathlib.Path("/proc/self/mountinfo").read_text().splitlines(keepends=True)
    seed("CgroupLayout", "self-mountinfo-cgroups",
         "".join(l for l in lines if " - cgroup" in l or " /sys/fs/cgroup " in l or " / / " in l))
