#!/bin/bash
# End-to-end check of the local BOINC project with the real client and boinccmd only (no nicer code):
# attach -> master page -> scheduler RPC -> input download -> task runs (fraction done > 0 seen via
# boinccmd) -> output upload -> report. Everything runs in a temp dir on loopback with free ports, and
# every process started here is stopped on exit.
#
# Usage: run-whole-path.sh [--task-seconds S] [--input-bytes N] [--timeout SECONDS] [--keep]
#   --keep   leave the temp dir (server state, client data dir, logs) for inspection
# Exit status: 0 when the whole path happened, 1 with a message naming the step that did not.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
PROJECT="$HERE/boinc_test_project.py"
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3
TASK_SECONDS=8
INPUT_BYTES=1048576
TIMEOUT=180
KEEP=0
AUTHENTICATOR=nicertest_authenticator

while [ $# -gt 0 ]; do
    case "$1" in
        --task-seconds) TASK_SECONDS=${2:?--task-seconds needs a value}; shift 2 ;;
        --input-bytes) INPUT_BYTES=${2:?--input-bytes needs a value}; shift 2 ;;
        --timeout) TIMEOUT=${2:?--timeout needs a value}; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "run-whole-path: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
for tool in boinc boinccmd; do
    command -v "$tool" >/dev/null || { echo "run-whole-path: $tool not found (apt-get install boinc-client)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/nicertest-path.XXXXXX)
SERVER_PID=
CLIENT_PID=
GUI_PORT=
PASSWORD=

rpc() { boinccmd --host "localhost:$GUI_PORT" --passwd "$PASSWORD" "$@"; }

cleanup() {
    local status=$?
    if [ -n "$CLIENT_PID" ] && kill -0 "$CLIENT_PID" 2>/dev/null; then
        rpc --quit >/dev/null 2>&1 || true
        for _ in $(seq 50); do kill -0 "$CLIENT_PID" 2>/dev/null || break; sleep 0.1; done
        kill "$CLIENT_PID" 2>/dev/null || true
        for _ in $(seq 30); do kill -0 "$CLIENT_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$CLIENT_PID" 2>/dev/null || true
    fi
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [ "$KEEP" = 1 ] || [ "$status" != 0 ]; then
        echo "run-whole-path: files kept in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

START=$(date +%s.%N)
DEADLINE=$(( $(date +%s) + TIMEOUT ))
elapsed() { "$PYTHON" -c "import sys; print('%.1f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$(date +%s.%N)" "$1"; }

fail() {
    echo "run-whole-path: FAILED: $*" >&2
    echo "---- server log (last 20 lines) ----" >&2
    tail -n 20 "$WORK/server.log" >&2 2>/dev/null || true
    echo "---- client tasks ----" >&2
    rpc --get_tasks 2>/dev/null | grep -E 'name:|state|fraction done' >&2 || true
    echo "---- client messages (last 25) ----" >&2
    { rpc --get_messages 0 2>/dev/null || cat "$WORK/client.log" 2>/dev/null; } | grep -v 'Processor features' | tail -n 25 >&2 || true
    exit 1
}

# Query the server's JSON state file with a Python expression over `d`; prints the value.
state() {
    "$PYTHON" - "$WORK/server/state.json" "$1" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    d = None
print(eval(sys.argv[2]) if d is not None else "")
EOF
}

free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Wait until a shell condition holds, or fail naming the step.
wait_for() {
    local what=$1; shift
    while ! "$@"; do
        [ "$(date +%s)" -lt "$DEADLINE" ] || fail "$what did not happen within ${TIMEOUT}s"
        kill -0 "$SERVER_PID" 2>/dev/null || fail "the project server died ($what)"
        [ -z "$CLIENT_PID" ] || kill -0 "$CLIENT_PID" 2>/dev/null || fail "the BOINC client died ($what)"
        sleep 0.5
    done
    printf 'run-whole-path: %-44s at +%ss\n' "$what" "$(elapsed "$ATTACH_TIME")"
}
ATTACH_TIME=$START

# 1. The project server.
mkdir -p "$WORK/server" "$WORK/boinc"
"$PYTHON" "$PROJECT" --dir "$WORK/server" --workunits 1 --task-seconds "$TASK_SECONDS" \
    --input-bytes "$INPUT_BYTES" --url-file "$WORK/url" >/dev/null 2>"$WORK/server.log" &
SERVER_PID=$!
url_written() { [ -s "$WORK/url" ]; }
wait_for "project server listening" url_written
URL=$(cat "$WORK/url")

# 2. The client, with test-friendly cc_config.xml and preferences written first.
"$PYTHON" "$PROJECT" prepare-client --boinc-dir "$WORK/boinc" --url "$URL" \
    --task-seconds "$TASK_SECONDS" --client-config >/dev/null
GUI_PORT=$(free_port)
(cd "$WORK/boinc" && exec boinc --dir "$WORK/boinc" --gui_rpc_port "$GUI_PORT" >"$WORK/client.log" 2>&1) &
CLIENT_PID=$!
client_answers() {
    [ -s "$WORK/boinc/gui_rpc_auth.cfg" ] || return 1
    PASSWORD=$(cat "$WORK/boinc/gui_rpc_auth.cfg")
    rpc --get_cc_status >/dev/null 2>&1
}
wait_for "client answering GUI RPCs on port $GUI_PORT" client_answers

# 3. Attach.
rpc --project_attach "$URL" "$AUTHENTICATOR" >/dev/null || fail "boinccmd --project_attach was refused"
ATTACH_TIME=$(date +%s.%N)
echo "run-whole-path: attached to $URL (client data dir $WORK/boinc)"

master_fetched() { [ "$(state 'len(d["master_fetches"]) > 0')" = True ]; }
wait_for "master page fetched" master_fetched
job_sent() { [ "$(state 'any(r["sent"] for r in d["scheduler_requests"])')" = True ]; }
wait_for "scheduler RPC sent the job" job_sent
input_downloaded() { [ "$(state 'any(x["complete"] for x in d["downloads"])')" = True ]; }
wait_for "input file downloaded" input_downloaded

# The task must be seen running with fraction done > 0 (polled through boinccmd, like a GUI would).
MAX_FRACTION=0
task_progressing() {
    local fraction
    fraction=$(rpc --get_tasks 2>/dev/null | sed -n 's/^ *fraction done: //p' | head -n 1)
    if [ -n "$fraction" ]; then
        MAX_FRACTION=$("$PYTHON" -c 'import sys; print(max(float(a) for a in sys.argv[1:]))' "$MAX_FRACTION" "$fraction")
    fi
    [ "$("$PYTHON" -c 'import sys; print(float(sys.argv[1]) > 0)' "$MAX_FRACTION")" = True ]
}
wait_for "task running with fraction done > 0" task_progressing
echo "run-whole-path: (fraction done seen: $MAX_FRACTION)"

output_uploaded() { [ "$(state 'any(u["status"] == "ok" for u in d["uploads"].values())')" = True ]; }
wait_for "output file uploaded (size and md5 ok)" output_uploaded
result_reported() { [ "$(state 'any(r["status"] == "reported" for r in d["results"].values())')" = True ]; }
wait_for "result reported" result_reported

OUTCOME=$(state 'next(r for r in d["results"].values() if r["status"] == "reported")["outcome"]')
EXIT_STATUS=$(state 'next(r for r in d["results"].values() if r["status"] == "reported")["exit_status"]')
[ "$OUTCOME" = success ] || fail "the result was reported as $OUTCOME (exit status $EXIT_STATUS)"
echo "run-whole-path: OK: whole path in $(elapsed "$ATTACH_TIME")s after attach ($(elapsed "$START")s in all)"
