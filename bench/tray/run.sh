#!/usr/bin/env bash
# How light is nicer-tray? Its CPU use with the window open at nicerd's default one sample per second,
# against the same tray with the window hidden and against nicerd itself, measured side by side in one run
# on a private X server with a tray host. Prints a Markdown table; the budget is 1% of one core.
#
# Usage:  bench/tray/run.sh [BUILD_DIR] [SECONDS_PER_RUN] [REPETITIONS]    (defaults: build 60 3)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
seconds=${2:-60}
reps=${3:-3}
warmup=10
hz=$(getconf CLK_TCK)

if [ "${NICER_BENCH_INSIDE:-}" != 1 ]; then
    eval "$("$root/tests/harness/user-manager.sh" start)"
    state=$(mktemp -d)
    trap '"$root/tests/harness/runtime-unit.sh" remove; rm -rf "$state"' EXIT
    NICER_STATE_DIR=$state "$root/tests/harness/runtime-unit.sh" install "$build"
    systemctl --user start nicerd.service
    NICER_BENCH_INSIDE=1 "$root/tests/harness/xvfb-tray-host.sh" "${BASH_SOURCE[0]}" "$build" "$seconds" "$reps"
    exit
fi

# CPU ticks (user + system) of a process so far.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Percent of one core used by PID over the next $seconds.
measure() {
    local pid=$1 before after
    before=$(ticks "$pid")
    sleep "$seconds"
    after=$(ticks "$pid")
    awk -v d=$((after - before)) -v hz="$hz" -v s="$seconds" 'BEGIN { printf "%.3f", 100 * d / hz / s }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

nicerd_pid=$(systemctl --user show -p MainPID --value nicerd.service)
open=() hidden=() daemon=()
for ((i = 1; i <= reps; i++)); do
    for mode in open hidden; do
        args=()
        [ "$mode" = open ] && args=(--show)
        "$build/app/tray/nicer-tray" --no-start "${args[@]}" &
        tray=$!
        sleep "$warmup"
        if [ "$mode" = open ]; then
            nicerd_before=$(ticks "$nicerd_pid")
            open+=("$(measure "$tray")")
            daemon+=("$(awk -v d=$(($(ticks "$nicerd_pid") - nicerd_before)) -v hz="$hz" -v s="$seconds" \
                'BEGIN { printf "%.3f", 100 * d / hz / s }')")
        else
            hidden+=("$(measure "$tray")")
        fi
        kill "$tray"
        wait "$tray" 2>/dev/null || true
    done
done

m_open=$(printf '%s\n' "${open[@]}" | median)
m_hidden=$(printf '%s\n' "${hidden[@]}" | median)
m_daemon=$(printf '%s\n' "${daemon[@]}" | median)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
cat <<TABLE
| what (${reps} runs of ${seconds} s, median) | CPU, % of one core | ratio to the 1 % budget |
|---|---|---|
| nicer-tray, window open, 1 sample/s | ${m_open} | $(ratio "$m_open" 1) |
| nicer-tray, window hidden (tray icon only) | ${m_hidden} | $(ratio "$m_hidden" 1) |
| nicerd (same interval as the open window) | ${m_daemon} | $(ratio "$m_daemon" 1) |

Window open / hidden: $(ratio "$m_open" "$m_hidden"); tray with window open / nicerd: $(ratio "$m_open" "$m_daemon").
Runs, open: ${open[*]}; hidden: ${hidden[*]}; nicerd: ${daemon[*]}.
TABLE
