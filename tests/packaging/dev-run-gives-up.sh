#!/usr/bin/env bash
# A dev-run-stops.sh that FAILS leaves nothing running either: made to give up at three moments of
# `packaging/dev.sh run` (while it checks its packages and configures, just after the user manager started,
# and once nicerd, the tray and the work all run), it must fail saying so, and afterwards no process of the
# ones dev.sh run starts (nicerd, nicer-tray, md5sum, Xvfb, trayer, a private systemd) may be left, nor the
# build's runtime unit or a private user manager's pid file. CI runs it after dev-run-stops.sh.
#
# Usage:  tests/packaging/dev-run-gives-up.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runtime=${XDG_RUNTIME_DIR:-/run/user/$(id -u)}
names='^(nicerd|nicer-tray|md5sum|Xvfb|trayer|systemd)$'
ours() { ps -eo pid=,comm= | awk -v re="$names" '$2 ~ re { print $1, $2 }' | sort; }

passed=0
failed=0
# give_up NAME EXPECTED_PROCESS ARGS...: dev-run-stops.sh ARGS must fail by giving up; when EXPECTED_PROCESS
# is given, it must have been running then (else the moment proved nothing).
give_up() {
    local name=$1 expected=$2 status=0 left
    shift 2
    ours >"$work/before"
    "$root/tests/packaging/dev-run-stops.sh" "$@" >"$work/log" 2>&1 || status=$?
    left=$(ours | comm -13 "$work/before" -)
    local why=
    if [ "$status" -eq 0 ]; then
        why="dev-run-stops.sh passed although made to give up"
    elif ! grep -qE 'FAILED: (gave up|nicerd never reported)' "$work/log"; then
        why="dev-run-stops.sh failed for another reason"
    elif [ -n "$left" ]; then
        why="left running: $(awk '{ printf "%s(%s) ", $2, $1 }' <<<"$left")"
    elif [ -e "$runtime/systemd/user/nicerd.service" ]; then
        why="the build's runtime unit nicerd.service was left"
    elif [ -e "$runtime/nicer-user-manager.pid" ]; then
        why="the private user manager's pid file was left"
    elif [ -n "$expected" ] && ! grep -q "^dev-run-stops: running when it gave up:.* $expected" "$work/log"; then
        why="no $expected ran when it gave up: the moment proved nothing"
    fi
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        echo "dev-run-gives-up: ok      $name: $(grep -m1 '^dev-run-stops: running when it gave up' "$work/log" || echo 'nothing ran yet')"
    else
        failed=$((failed + 1))
        echo "dev-run-gives-up: FAILED  $name: $why" >&2
        sed 's/^/    /' "$work/log" | tail -n 25 >&2
        # Whatever was left must not outlive the test either.
        awk '{ print $1 }' <<<"$left" | xargs -r kill -KILL 2>/dev/null || true
    fi
}

give_up "after 1 s (packages, configure)" "" --give-up-after 1
give_up "just after the user manager started" "" --give-up-when 'user-manager: (started|user manager already)'
give_up "once nicerd, the tray and the work run" md5sum --give-up-when '^  parameters'
echo "dev-run-gives-up: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
