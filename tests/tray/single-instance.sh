#!/usr/bin/env bash
# A second nicer-tray brings the first one's window forward and exits: one process, one icon in the tray.
#
# Usage:  dbus-run-session -- tests/harness/xvfb-tray-host.sh tests/tray/single-instance.sh NICER_TRAY
#
# Runs on the X server and tray host of xvfb-tray-host.sh and on a private session bus (dbus-run-session), so
# a nicer-tray of the developer's own session cannot answer for ours. Needs xwininfo (x11-utils) and busctl
# (systemd). Every wait polls up to a deadline that only bounds a hang; no timing is asserted.
set -euo pipefail

[ $# -eq 1 ] || { sed -n '2,4p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
tray=$1
: "${DISPLAY:?run me under tests/harness/xvfb-tray-host.sh}"
: "${DBUS_SESSION_BUS_ADDRESS:?run me under dbus-run-session}"
for tool in xwininfo busctl; do
    command -v "$tool" >/dev/null || { echo "single-instance: $tool is missing (x11-utils, systemd)" >&2; exit 1; }
done

readonly title="nicer: spare CPU for volunteer computing"
work=$(mktemp -d)
first=
second=
cleanup() {
    local pid
    for pid in $second $first; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

fail() {
    echo "single-instance: FAILED: $*" >&2
    for log in "$work"/*.log; do [ -s "$log" ] && { echo "--- $log" >&2; cat "$log" >&2; }; done
    exit 1
}

# Polls COMMAND until it succeeds or 30 s pass (a bound on a hang, not a claim on speed).
wait_for() {
    local deadline=$((SECONDS + 30))
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

name_owned() {
    busctl --user call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner \
        s org.nicer.Tray 2>/dev/null | grep -qx 'b true'
}
name_free() { ! name_owned; }

# nicer-tray processes on this X server (other sessions on the machine are not ours to count).
our_processes() {
    local pid count=0
    for pid in $(pgrep -x nicer-tray || true); do
        if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "DISPLAY=$DISPLAY"; then
            count=$((count + 1))
        fi
    done
    echo "$count"
}

# Icons embedded in trayer's panel whose window belongs to nicer-tray.
tray_icons() {
    local panel
    panel=$(xwininfo -root -tree | awk '/\("panel" "trayer"\)/ { print $1; exit }')
    [ -n "$panel" ] || { echo 0; return; }
    xwininfo -tree -id "$panel" | grep -c '("nicer-tray" "nicer-tray")' || true
}
has_one_icon() { [ "$(tray_icons)" -eq 1 ]; }

window_viewable() {
    local id
    id=$(xwininfo -root -tree | grep -F "\"$title\"" | awk '{ print $1; exit }')
    [ -n "$id" ] && xwininfo -id "$id" | grep -q 'Map State: IsViewable'
}

# Another nicer-tray on this bus (one left by an earlier run) would answer for ours.
wait_for name_free || fail "org.nicer.Tray is already owned on $DBUS_SESSION_BUS_ADDRESS by another program"

"$tray" --no-start >"$work/first.log" 2>&1 &
first=$!
wait_for name_owned || fail "the first nicer-tray did not take org.nicer.Tray"
wait_for has_one_icon || fail "the first nicer-tray's icon did not appear in the tray ($(tray_icons) icons)"
! window_viewable || fail "the first nicer-tray showed its window without --show"

"$tray" --show --no-start >"$work/second.log" 2>&1 &
second=$!
second_exited() { ! kill -0 "$second" 2>/dev/null; }
wait_for second_exited || fail "the second nicer-tray did not exit"
status=0
wait "$second" || status=$?
second=
[ "$status" -eq 0 ] || fail "the second nicer-tray exited with status $status"
grep -q "already running" "$work/second.log" || fail "the second nicer-tray did not say it found the first"
wait_for window_viewable || fail "the first nicer-tray's window did not come forward"

kill -0 "$first" 2>/dev/null || fail "the first nicer-tray is gone"
[ "$(our_processes)" -eq 1 ] || fail "$(our_processes) nicer-tray processes run on $DISPLAY, not one"
[ "$(tray_icons)" -eq 1 ] || fail "$(tray_icons) nicer-tray icons are in the tray, not one"
echo "single-instance: the second launch brought the first forward and exited; one process, one icon"
