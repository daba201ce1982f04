"""The files the clients download, and their manifests. Files are sparse (zeros) so the server needs no disk;
the hashes in the Metalinks are real."""

import hashlib
import math
from functools import cache

from link import SERVER_IP

MIB = 1024 * 1024


@cache
def zeros_sha256(size):
    digest = hashlib.sha256()
    block = bytes(min(size, MIB))
    left = size
    while left:
        digest.update(block[:min(left, len(block))])
        left -= min(left, len(block))
    return digest.hexdigest()


def pareto_sizes(n, total):
    """@p n bounded-Pareto sizes (alpha 1.1, 64 KiB..total/3) scaled to @p total bytes, in a shuffled order,
    from a fixed LCG. The arithmetic is in doubles, as awk's was in the bash version of this bench (where
    s * 1103515245 loses its low bits), so the sets, and the figures of docs/bench-net.md, stay the same."""
    s, a, lo, hi = 12345.0, 1.1, 65536.0, total / 3

    def step():
        nonlocal s
        s = math.fmod(s * 1103515245 + 12345, 2147483648)
        return s / 2147483648

    x = [lo / ((1 - step() * (1 - (lo / hi) ** a)) ** (1 / a)) for _ in range(n)]
    whole = sum(x)
    y = [max(int(v * total / whole), 4096) for v in x]
    for i in range(n - 1, 0, -1):
        j = int(step() * (i + 1))
        y[i], y[j] = y[j], y[i]
    return y


class FileSets:
    """(a) idle: K equal files, one per stream or connection; (b) bg: enough background work to outlast
    warm-up + foreground window at full link speed, twice over, and the foreground's file; (c) tail: 3K files
    with heavy-tailed sizes. Each set is a list of (file name, size) in manifest order."""

    def __init__(self, work, streams, total_mb, bytes_per_second, seconds):
        self.work = work
        self.www = work / "www"
        self.www.mkdir(parents=True)
        total = total_mb * MIB
        bg_each = round(2 * bytes_per_second * seconds / streams)
        self.sets = {
            "idle": self.make("idle", [total // streams] * streams),
            "bg": self.make("bg", [bg_each] * streams),
            "tail": self.make("tail", pareto_sizes(3 * streams, total)),
        }
        with open(self.www / "foreground.bin", "wb") as f:
            f.truncate(64 << 30)
        for name in self.sets:
            self.write_meta4(name, f"http://{SERVER_IP}:8080", f"{name}-h2.meta4")
            self.write_meta4(name, f"http://{SERVER_IP}", f"{name}-h1.meta4")
        self.write_meta4("tail", f"http://{SERVER_IP}:8081", "tail-nghttpd.meta4")
        # curl: one url/output pair per file, all on one HTTP/2 connection.
        for name in ("idle", "bg"):
            (work / f"{name}-curl.conf").write_text("".join(
                f'url = "https://{SERVER_IP}:8443/{file}"\noutput = "{file}"\n' for file, _ in self.sets[name]))

    def make(self, name, sizes):
        """Sparse files www/NAME-NN.bin of @p sizes."""
        files = []
        for i, size in enumerate(sizes, 1):
            file = f"{name}-{i:02d}.bin"
            with open(self.www / file, "wb") as f:
                f.truncate(size)
            files.append((file, size))
        return files

    def bytes(self, name):
        return sum(size for _, size in self.sets[name])

    def write_meta4(self, name, base, manifest):
        lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<metalink xmlns="urn:ietf:params:xml:ns:metalink">']
        for file, size in self.sets[name]:
            lines += [f'  <file name="{file}">', f"    <size>{size}</size>",
                      f'    <hash type="sha-256">{zeros_sha256(size)}</hash>', f"    <url>{base}/{file}</url>",
                      "  </file>"]
        lines.append("</metalink>")
        (self.work / manifest).write_text("\n".join(lines) + "\n")
