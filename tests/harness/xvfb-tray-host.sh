#!/usr/bin/env bash
# Run a command on a private X server (Xvfb) with a system tray host (trayer), as a desktop would give it.
#
# Usage:  tests/harness/xvfb-tray-host.sh COMMAND [ARGS...]
#
# Xvfb picks a free display itself (-displayfd); trayer provides the freedesktop system tray, without which
# QSystemTrayIcon::isSystemTrayAvailable() is false. Both stop when the command ends; a SIGINT or SIGTERM to
# this script stops the command first and waits for all three, so nothing it started outlives it.
set -euo pipefail

[ $# -gt 0 ] || { sed -n '2,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

for tool in Xvfb trayer; do
    command -v "$tool" >/dev/null || { echo "xvfb-tray-host: $tool is missing: install xvfb and trayer (packaging/dev.sh does)" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$work/display" 2>"$work/xvfb.log" &
pids+=($!)
for _ in $(seq 100); do
    [ -s "$work/display" ] && break
    sleep 0.1
done
[ -s "$work/display" ] || { echo "xvfb-tray-host: Xvfb did not start:" >&2; cat "$work/xvfb.log" >&2; exit 1; }
export DISPLAY=:$(head -n1 "$work/display")

trayer --edge top --align right --widthtype request --height 24 --transparent false \
    --tint 0x30343a >"$work/trayer.log" 2>&1 &
pids+=($!)

QT_QPA_PLATFORM=xcb "$@" &
pids=($! "${pids[@]}")
wait "${pids[0]}"
