#!/usr/bin/env bash
# Resume stress test of `nicer fetch` (not run by CTest: it moves ~1 GB through loopback and takes minutes).
#
# Usage: tests/net/resume-stress.sh --nicer PATH/TO/nicer [--files 200] [--total-mb 500] [--kills 8]
#                                   [--rate 40M] [--streams 8] [--seed N] [--work DIR] [--keep]
#
# What it does: starts the REAL test servers (tests/harness/h2-servers.sh) in a work directory, puts FILES
# files with heavy-tailed (Pareto, alpha 1.2) sizes totalling at least TOTAL-MB MB into nginx's document root,
# writes a Metalink 4 manifest with their SHA-256, then runs `nicer fetch` KILLS times with --max-rate RATE
# and SIGKILLs it at a random moment each time, and finally lets one run (no rate limit) finish.
#
# What it checks and reports (exit 1 if a check fails):
#  - after every kill, every file under its final name has the right SHA-256 (no corrupt file accepted);
#  - at the end every file is in place and verified, and no .part file is left;
#  - TCP connections per run, from nginx's access log (the fetcher shares one connection per origin);
#  - bytes the server sent over all runs versus the total size (what in-flight data each kill lost);
#  - files restarted from zero: a request without Range (or with a Range other than the .part's size) for a
#    file whose .part held data when the run started. Must be 0.
set -euo pipefail

log() { echo "resume-stress: $*" >&2; }
die() { log "$*"; exit 2; }

NICER="" FILES=200 TOTAL_MB=500 KILLS=8 RATE=40M STREAMS=8 SEED=$RANDOM WORK="" KEEP=""
while [[ $# -gt 0 ]]; do
  case "$1" in
  --nicer) NICER=$2; shift 2 ;;
  --files) FILES=$2; shift 2 ;;
  --total-mb) TOTAL_MB=$2; shift 2 ;;
  --kills) KILLS=$2; shift 2 ;;
  --rate) RATE=$2; shift 2 ;;
  --streams) STREAMS=$2; shift 2 ;;
  --seed) SEED=$2; shift 2 ;;
  --work) WORK=$2; shift 2 ;;
  --keep) KEEP=1; shift ;;
  *) die "unknown argument $1 (see the usage at the top of $0)" ;;
  esac
done
[[ -x $NICER ]] || die "pass --nicer PATH/TO/nicer (the built CLI)"
NICER=$(cd "$(dirname "$NICER")" && pwd)/$(basename "$NICER")
command -v python3 >/dev/null || die "python3 is needed for the manifest and the log analysis"
command -v nghttp >/dev/null || die "nghttp (nghttp2-client) is needed to ask nginx when its log is complete"
HERE=$(cd "$(dirname "$0")" && pwd)
HARNESS=$HERE/../harness/h2-servers.sh
[[ -n $WORK ]] || WORK=$(mktemp -d /tmp/nicer-resume-stress-XXXXXX)
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

cleanup() {
  "$HARNESS" stop "$WORK/servers" >/dev/null 2>&1 || true
  if [[ -z $KEEP ]]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}
trap cleanup EXIT

log "work directory $WORK, seed $SEED"
"$HARNESS" start "$WORK/servers" >"$WORK/servers.env"
# shellcheck disable=SC1091
. "$WORK/servers.env"
BASE="http://127.0.0.1:$H2_NGINX_QUIRKS_PORT"
SRC=$H2_WWW/stress
export SRC
OUT=$WORK/out
mkdir -p "$SRC" "$OUT"

# Sizes: Pareto(alpha 1.2) from 64 KiB, capped at 15% of the total, scaled up until the sum reaches the total.
python3 - "$FILES" "$TOTAL_MB" "$SEED" >"$WORK/sizes" <<'EOF'
import random, sys
files, total_mb, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
target = total_mb * 1000 * 1000
sizes = [int(65536 * rng.paretovariate(1.2)) for _ in range(files)]
cap = int(target * 0.15)
scale = 1.0
while sum(min(cap, int(s * scale)) for s in sizes) < target:
    scale *= 1.05
for s in sizes:
    print(min(cap, int(s * scale)))
EOF
log "generating $FILES files ($(awk '{t += $1} END {printf "%.0f", t / 1e6}' "$WORK/sizes") MB) in $SRC"
i=0
while read -r size; do
  # Fast, distinct, deterministic bytes: AES-CTR keystream with a per-file IV.
  head -c "$size" /dev/zero | openssl enc -aes-128-ctr -nosalt -K 000102030405060708090a0b0c0d0e0f \
    -iv "$(printf '%032x' $((SEED * 1000 + i)))" >"$SRC/w$(printf '%03d' $i).bin"
  i=$((i + 1))
done <"$WORK/sizes"
(cd "$SRC" && sha256sum -- *.bin >"$WORK/SHA256SUMS")

python3 - "$WORK/SHA256SUMS" "$BASE/stress" >"$WORK/stress.meta4" <<'EOF'
import os, sys
sums, base = sys.argv[1], sys.argv[2]
src = os.path.dirname(sums)
print('<?xml version="1.0" encoding="UTF-8"?>')
print('<metalink xmlns="urn:ietf:params:xml:ns:metalink">')
for line in open(sums):
    digest, name = line.split()
    size = os.path.getsize(os.path.join(os.environ["SRC"], name))
    print(f'  <file name="{name}"><size>{size}</size><hash type="sha-256">{digest}</hash>'
          f'<url priority="1">{base}/{name}</url></file>')
print('</metalink>')
EOF

# Checks every file under its final name; prints the number of bad ones.
check_final() {
  local bad=0 name digest
  while read -r digest name; do
    if [[ -e $OUT/$name ]] && [[ $(sha256sum <"$OUT/$name" | cut -d' ' -f1) != "$digest" ]]; then
      log "CORRUPT FILE UNDER ITS FINAL NAME: $name"
      bad=$((bad + 1))
    fi
  done <"$WORK/SHA256SUMS"
  echo "$bad"
}

# Waits until nginx has logged every request of the run that ended: it writes a request's line before it closes
# the connection, so once the status request's own is the only one open, all are in the log.
wait_logged() {
  local deadline=$((SECONDS + 30)) active=""
  until active=$(nghttp "$BASE/nginx-status" | sed -n 's/^Active connections: *\([0-9]*\).*/\1/p') &&
    [[ $active == 1 ]]; do
    ((SECONDS < deadline)) || die "nginx still has ${active:-an unknown number of} connection(s) 30 s after the run"
    sleep 0.1
  done
}

# Part sizes at the start of each run: RUN NAME SIZE lines.
snapshot_parts() { # RUN
  local f
  for f in "$OUT"/*.part; do
    [[ -e $f ]] || continue
    echo "$1 $(basename "$f" .part) $(stat -c %s "$f")"
  done >>"$WORK/parts"
}

: >"$WORK/parts"
: >"$WORK/runs"
corrupt=0
RANDOM=$SEED
for ((run = 0; run < KILLS; run++)); do
  snapshot_parts "$run"
  start_line=$(wc -l <"$H2_NGINX_QUIRKS_LOG")
  "$NICER" fetch "$WORK/stress.meta4" --dir "$OUT" --max-rate "$RATE" --streams "$STREAMS" --json \
    >"$WORK/run$run.json" 2>"$WORK/run$run.err" &
  pid=$!
  delay=$(awk -v r=$RANDOM 'BEGIN {printf "%.2f", 0.5 + 3.5 * r / 32768}')
  sleep "$delay"
  if ! kill -KILL "$pid" 2>/dev/null; then
    log "run $run finished before its kill at ${delay}s; lower --rate or --kills"
  fi
  wait "$pid" 2>/dev/null || true
  wait_logged
  echo "$run $start_line $(wc -l <"$H2_NGINX_QUIRKS_LOG") killed-at=${delay}s" >>"$WORK/runs"
  bad=$(check_final)
  corrupt=$((corrupt + bad))
  log "run $run killed at ${delay}s: $(ls "$OUT" | grep -vc '\.part$') files in place, $(ls "$OUT" | grep -c '\.part$') part files, $bad corrupt"
done

snapshot_parts "$KILLS"
start_line=$(wc -l <"$H2_NGINX_QUIRKS_LOG")
set +e
"$NICER" fetch "$WORK/stress.meta4" --dir "$OUT" --streams "$STREAMS" --json >"$WORK/final.json" 2>"$WORK/final.err"
status=$?
set -e
wait_logged
echo "$KILLS $start_line $(wc -l <"$H2_NGINX_QUIRKS_LOG") final" >>"$WORK/runs"
bad=$(check_final)
corrupt=$((corrupt + bad))

python3 - "$WORK" "$H2_NGINX_QUIRKS_LOG" "$status" "$corrupt" <<'EOF'
import json, os, sys
work, log_path, status, corrupt = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
src = os.environ["SRC"]
sums = {l.split()[1]: l.split()[0] for l in open(os.path.join(work, "SHA256SUMS"))}
total = sum(os.path.getsize(os.path.join(src, n)) for n in sums)
parts = {}
for line in open(os.path.join(work, "parts")):
    run, name, size = line.split()
    parts.setdefault(int(run), {})[name] = int(size)
lines = open(log_path).read().splitlines()
restarted, sent, failures = 0, 0, []
print(f"files {len(sums)}, total {total / 1e6:.1f} MB")
for spec in open(os.path.join(work, "runs")):
    run, begin, end, what = spec.split()
    run, begin, end = int(run), int(begin), int(end)
    first, connections, run_sent = {}, set(), 0
    for line in lines[begin:end]:
        conn, req, uri, rng, st, size = line.split()
        uri, rng = uri.strip('"'), rng.strip('"')
        if not uri.startswith("/stress/"):
            continue
        name = uri[len("/stress/"):]
        connections.add(conn)
        run_sent += int(size)
        if name not in first or int(req) < first[name][0]:
            first[name] = (int(req), rng)
    sent += run_sent
    for name, (req, rng) in first.items():
        have = parts.get(run, {}).get(name, 0)
        want = f"bytes={have}-" if have > 0 else "-"
        if have > 0 and rng != want:
            restarted += 1
            failures.append(f"run {run}: {name} had {have} bytes in its .part but was requested with range {rng}")
    print(f"run {run} ({what}): {len(connections)} TCP connection(s), {len(first)} files requested, "
          f"{sum(1 for n in first if parts.get(run, {}).get(n, 0) > 0)} resumed, {run_sent / 1e6:.1f} MB sent")
final = json.load(open(os.path.join(work, "final.json"))) if status in (0, 1) else {"files": [], "totals": {}}
t = final.get("totals", {})
out = os.path.join(work, "out")
missing = [n for n, d in sums.items() if not os.path.exists(os.path.join(out, n))]
leftover = [n for n in os.listdir(out) if n.endswith(".part")]
print(f"final run: exit {status}, ok {t.get('ok')}, already present {t.get('alreadyPresent')}, failed "
      f"{t.get('failed')}, {t.get('connectionsOpened')} connection(s), {t.get('bytes', 0) / 1e6:.1f} MB in "
      f"{t.get('seconds', 0):.1f} s, hash mismatches {t.get('hashMismatches')}, range ignored {t.get('rangeIgnored')}")
print(f"bytes sent by the server over all runs: {sent / 1e6:.1f} MB = {sent / total:.4f} x the total size")
print(f"files restarted from zero: {restarted}")
print(f"corrupt files under their final name after a kill: {corrupt}")
print(f"files missing at the end: {len(missing)}, part files left: {len(leftover)}")
for f in failures[:20]:
    print("  " + f)
ok = status == 0 and restarted == 0 and corrupt == 0 and not missing and not leftover
print("RESULT: " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
EOF
