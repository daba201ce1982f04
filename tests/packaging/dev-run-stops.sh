#!/usr/bin/env bash
# `packaging/dev.sh run`, then Ctrl-C: everything it started must be gone (the tray, its Xvfb and trayer,
# nicerd, the work units, a private user manager). Then again, with the tray ending by itself (quit, or
# killed): dev.sh says so, ends with the tray's status, and stops the same. CI runs it after the test suite;
# it needs a built tree and root (or a session with a user manager and a display).
#
# Usage:  tests/packaging/dev-run-stops.sh [--expect-built] [--give-up-after SECONDS] [--give-up-when REGEX]
#   --expect-built   dev.sh run must find nothing to build (CI: `dev.sh test` has just built the same tree, as
#                    a volunteer running the README's two commands one after the other)
#   --give-up-after  how long to wait for nicerd's first status (default 300: dev.sh may still be building)
#   --give-up-when   fail at once when dev.sh's log shows REGEX (tests/packaging/dev-run-gives-up.sh: a check
#                    that fails at any moment leaves nothing running either)
#
# Ctrl-C is a SIGINT to the terminal's foreground process group: dev.sh runs as a job in a process group of
# its own and the whole group gets SIGINT, as a terminal would send it. Only processes that appeared while
# dev.sh ran are counted, so a nicer of the developer's own session does not disturb the result.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
give_up_after=300
give_up_when=
expect_built=
while [ $# -gt 0 ]; do
    case "$1" in
    --give-up-after) give_up_after=$2; shift 2 ;;
    --give-up-when) give_up_when=$2; shift 2 ;;
    --expect-built) expect_built=1; shift ;;
    *) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
[[ $give_up_after =~ ^[1-9][0-9]*$ ]] || { echo "dev-run-stops: --give-up-after takes whole seconds, at least 1" >&2; exit 2; }
work=$(mktemp -d)
names='^(nicerd|nicer-tray|md5sum|Xvfb|trayer|systemd)$'
ours() { ps -eo pid=,comm= | awk -v re="$names" '$2 ~ re { print $1, $2 }' | sort; }

# On every way out, passed or failed: a dev.sh still running is stopped as Ctrl-C stops it, and whatever it
# started and left is stopped here and named (a failed check must not leave the work running at full CPU).
stop_dev() {
    trap - EXIT
    if [ -n "${leader:-}" ] && kill -0 "$leader" 2>/dev/null; then
        echo "dev-run-stops: stopping dev.sh run (Ctrl-C)" >&2
        kill -INT -- "-$leader" 2>/dev/null || true
        timeout 60 tail --pid="$leader" -f /dev/null || kill -KILL -- "-$leader" 2>/dev/null || true
    fi
    if [ -f "$work/before" ]; then
        local left
        left=$(ours | comm -13 "$work/before" -)
        if [ -n "$left" ]; then
            echo "dev-run-stops: dev.sh run left behind:" $(awk '{ print $2 "(" $1 ")" }' <<<"$left") "; stopping them" >&2
            # A private user manager first, the harness's way (it stops its units and removes its cgroups).
            if grep -q ' systemd$' <<<"$left"; then "$root/tests/harness/user-manager.sh" stop || true; fi
            awk '{ print $1 }' <<<"$left" | xargs -r kill -TERM 2>/dev/null || true
            # SIGKILL for any still there after 5 s (polled: most end at once).
            for _ in $(seq 50); do
                [ -n "$(ours | comm -12 - <(echo "$left"))" ] || break
                sleep 0.1
            done
            ours | comm -12 - <(echo "$left") | awk '{ print $1 }' | xargs -r kill -KILL 2>/dev/null || true
        fi
    fi
    rm -rf "$work"
}
trap stop_dev EXIT
fail() {
    echo "dev-run-stops: FAILED: $*" >&2
    tail -n 20 "$work/run.log" >&2 || true
    exit 1
}

# Starts dev.sh run as a job and waits until nicerd reports its status; sets leader and started.
start_dev() {
    ours >"$work/before"
    # Job control on: the job gets a process group of its own, and SIGINT is not ignored in it (a script's
    # background commands otherwise start with SIGINT ignored, and dev.sh could not see Ctrl-C). env puts
    # SIGINT back to its default for dev.sh as a terminal has it, should this script have been started with
    # it ignored (nohup, or a CI runner's background job): bash cannot trap a signal ignored when it starts,
    # and dev.sh would sit out the Ctrl-C that its Xvfb does take.
    set -m
    env --default-signal=INT "$root/packaging/dev.sh" run >"$work/run.log" 2>&1 </dev/null &
    leader=$!
    set +m
    # Up once nicerd reports its status (the loop of dev.sh run prints it every 2 s): grep reads the log as
    # it grows, and tail ends with dev.sh (--pid); 5 minutes bound a hang (dev.sh may still be building),
    # they are no claim on speed.
    local line
    line=$(grep -m1 -E "${give_up_when:+($give_up_when)|}^  parameters" < <(timeout "$give_up_after" \
        tail -n +1 -F --pid="$leader" "$work/run.log" 2>/dev/null) || true)
    if [ -z "$line" ] || { [ -n "$give_up_when" ] && grep -qE "$give_up_when" <<<"$line"; }; then
        echo "dev-run-stops: running when it gave up:$(ours | comm -13 "$work/before" - |
            awk '{ printf " %s(%s)", $2, $1 }')" >&2
    fi
    if [ -n "$give_up_when" ] && grep -qE "$give_up_when" <<<"$line"; then
        fail "gave up as asked (--give-up-when) when dev.sh run said: $line"
    fi
    if [ -z "$line" ]; then
        kill -0 "$leader" 2>/dev/null || fail "dev.sh run ended before nicerd reported its status"
        fail "nicerd never reported its status (gave up after $give_up_after s)"
    fi
    if [ -n "$expect_built" ] && ! grep -q '^ninja: no work to do' "$work/run.log"; then
        fail "dev.sh run rebuilt what was built: $(grep -c 'Building CXX object' "$work/run.log") compilations"
    fi
    ours >"$work/during"
    started=$(comm -13 "$work/before" "$work/during")
    echo "dev-run-stops: dev.sh run started:" $(awk '{ print $2 }' <<<"$started" | sort | uniq -c | awk '{ print $2 "x" $1 }')
    for name in nicerd nicer-tray md5sum; do
        grep -q " $name\$" <<<"$started" || fail "no $name appeared: the check would prove nothing"
    done
}

# Waits for dev.sh to end and sets status: tail returns when the process is gone (60 s bound a hang, no
# claim on speed).
wait_dev() {
    timeout 60 tail --pid="$leader" -f /dev/null || fail "dev.sh did not end within 60 s of $1"
    status=0
    wait "$leader" || status=$?
}

expect_all_stopped() {
    local left
    left=$(while read -r pid name; do kill -0 "$pid" 2>/dev/null && echo "$name($pid)"; done <<<"$started" || true)
    [ -z "$left" ] || fail "still running after $1: $left"
    [ ! -e "${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/systemd/user/nicerd.service" ] ||
        fail "the build's runtime unit nicerd.service was left behind after $1"
}

start_dev
# A dev.sh that already ended (the tray ended by itself) is a zombie until waited for, and its process group
# still takes the signal: say so rather than blame Ctrl-C.
case $(ps -o stat= -p "$leader" 2>/dev/null || echo gone) in
Z* | gone) fail "dev.sh run had already ended before Ctrl-C (did the tray end by itself?)" ;;
esac
kill -INT -- "-$leader"
wait_dev Ctrl-C
if [ "$status" -ne 130 ]; then
    grep -q 'nicer-tray ended by itself' "$work/run.log" &&
        fail "nicer-tray had ended by itself before Ctrl-C (dev.sh exited with $status)"
    fail "dev.sh exited with $status after Ctrl-C, not 130"
fi
expect_all_stopped Ctrl-C
echo "dev-run-stops: Ctrl-C stopped all $(wc -l <<<"$started") processes dev.sh run started"

start_dev
tray=$(awk '$2 == "nicer-tray" { print $1 }' <<<"$started")
kill -TERM $tray
wait_dev "the tray's end"
grep -q 'nicer-tray ended by itself' "$work/run.log" || fail "dev.sh did not say that the tray had ended"
[ "$status" -ne 0 ] || fail "dev.sh exited with 0 after its tray was killed, not the tray's status"
expect_all_stopped "the tray's end"
echo "dev-run-stops: the tray's end (dev.sh exited with $status) stopped all $(wc -l <<<"$started") processes"
echo "dev-run-stops: 2 passed, 0 failed"
