"""The shaped link: two network namespaces (server, client) joined by a veth pair, a tbf bottleneck on the
server->client direction, optional random loss on the client's ingress (nftables numgen). No added delay: the
kernel has no netem, and an NFQUEUE delay program would need libnetfilter-queue (docs/bench-net.md)."""

import os
import re
import signal
import subprocess
from pathlib import Path

from process import die, log, run

SERVER_IP = "10.77.0.1"
CLIENT_IP = "10.77.0.2"
ALLOWED_CC = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
UNITS = {"k": 1e3, "m": 1e6, "g": 1e9}


def rate_bytes(rate):
    """Bytes per second of a tc rate like 100mbit."""
    number, unit = re.fullmatch(r"([0-9]+)([kmg])bit", rate).groups()
    return round(int(number) * UNITS[unit] / 8)


def tbf_burst(bytes_per_second):
    """tbf needs a bucket of at least one timer tick's worth of bytes: 4 ms of the rate, at least 32 KiB."""
    return round(max(bytes_per_second * 0.004, 32768))


class Link:
    """Everything it creates is named after @p tag (the runner's PID) and removed by teardown()."""

    def __init__(self, tag, rate, buffer_ms, loss, cc):
        self.server_ns, self.client_ns = f"nbs{tag}", f"nbc{tag}"
        self.server_veth, self.client_veth = f"nbvs{tag}", f"nbvc{tag}"
        self.rate, self.buffer_ms, self.loss, self.cc = rate, buffer_ms, loss, cc
        self.burst = tbf_burst(rate_bytes(rate))
        self.saved_allowed = None

    def in_server(self, *args):
        return ["ip", "netns", "exec", self.server_ns, *map(str, args)]

    def in_client(self, *args):
        return ["ip", "netns", "exec", self.client_ns, *map(str, args)]

    def setup(self):
        run(["ip", "netns", "add", self.server_ns])
        run(["ip", "netns", "add", self.client_ns])
        run(["ip", "link", "add", self.server_veth, "type", "veth", "peer", "name", self.client_veth])
        run(["ip", "link", "set", self.server_veth, "netns", self.server_ns])
        run(["ip", "link", "set", self.client_veth, "netns", self.client_ns])
        run(self.in_server("ip", "addr", "add", f"{SERVER_IP}/24", "dev", self.server_veth))
        run(self.in_client("ip", "addr", "add", f"{CLIENT_IP}/24", "dev", self.client_veth))
        for inside, veth in ((self.in_server, self.server_veth), (self.in_client, self.client_veth)):
            run(inside("ip", "link", "set", "lo", "up"))
            run(inside("ip", "link", "set", veth, "up"))
        # The senders' congestion control decides how the flows share the bottleneck (set on both sides). A
        # namespace may only pick one of the allowed list (reno and bbr here); others are allowed for the run
        # and the list is restored on exit.
        allowed = ALLOWED_CC.read_text().strip()
        if self.cc not in allowed.split():
            available = AVAILABLE_CC.read_text().strip()
            if self.cc not in available.split():
                die(f"--cc {self.cc} is not available here: {available}")
            self.saved_allowed = allowed
            ALLOWED_CC.write_text(f"{allowed} {self.cc}\n")
            log(f"allowed congestion control '{self.cc}' in namespaces for this run (restored on exit)")
        for inside in (self.in_server, self.in_client):
            run(inside("sysctl", "-qw", f"net.ipv4.tcp_congestion_control={self.cc}"))
        run(self.in_server("tc", "qdisc", "add", "dev", self.server_veth, "root", "tbf", "rate", self.rate,
                           "burst", self.burst, "latency", f"{self.buffer_ms}ms"))
        if self.loss > 0:
            rules = f"""table inet nicerbench {{
    chain input {{
        type filter hook input priority 0; policy accept;
        ip saddr {SERVER_IP} numgen random mod 100 < {self.loss} drop
    }}
}}
"""
            run(self.in_client("nft", "-f", "-"), input=rules)

    def namespace_pids(self, ns):
        done = subprocess.run(["ip", "netns", "pids", ns], text=True, capture_output=True)
        return [int(pid) for pid in done.stdout.split()]

    def rx_bytes(self):
        """Bytes the client namespace has received so far (all interfaces but lo): headers included."""
        total = 0
        for line in run(self.in_client("cat", "/proc/net/dev")).splitlines()[2:]:
            name, _, counters = line.partition(":")
            if name.strip() != "lo":
                total += int(counters.split()[0])
        return total

    def quiet_client(self):
        """Nothing of an earlier measurement may still run in the client namespace when the next one starts."""
        left = []
        for pid in self.namespace_pids(self.client_ns):
            try:
                left.append(Path(f"/proc/{pid}/comm").read_text().strip())
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if left:
            log("warning: killed leftovers in the client namespace: " + " ".join(left))

    def teardown(self):
        """Kills what still runs in the namespaces (this runner started it), removes them and restores the
        allowed congestion controls."""
        existing = run(["ip", "netns", "list"], check=False).split()
        for ns in (self.client_ns, self.server_ns):
            if ns in existing:
                for pid in self.namespace_pids(ns):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        if self.saved_allowed is not None:
            ALLOWED_CC.write_text(self.saved_allowed + "\n")
