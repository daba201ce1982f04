#!/usr/bin/env bash
# The memory bench class: bench/mem/guest.py in the Debian 12 guest (pure cgroup v2, 2 GiB, no swap unless --swap; this
# machine's memory controller is on v1, with no memory.high), then its table (bench/mem/report.py).
# Not part of CI: about 14 minutes under TCG for 3 repetitions. Needs root, as tests/vm/run.sh does.
#
# Usage: bench/mem/run.sh [--deb FILE] [--out DIR] [-- GUEST_ARGS...]   (GUEST_ARGS: --repetitions N, --policies a,b, --swap MIB [--zram])
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
deb=
out=$root/build-bench-mem
while [ $# -gt 0 ]; do
    case "$1" in
    --deb) deb=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; break ;;
    *) sed -n '2,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
NICER_BENCH_ARGS="$*" "$root/tests/vm/run.sh" ${deb:+--deb "$deb"} --bench "$here/guest.py" --out "$out"
python3 "$here/report.py" "$out/bench.jsonl" | tee "$out/report.md"
