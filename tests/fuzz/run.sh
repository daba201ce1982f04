#!/usr/bin/env bash
# Runs every libFuzzer target of a NICER_FUZZ build for a while, each on a copy of its seed corpus (so the
# committed corpus stays as it is), and fails if any of them finds a crash, a broken invariant, a leak, a
# sanitizer report or a hang. Prints per target the executions and the coverage reached.
#
#   tests/fuzz/run.sh [-t SECONDS] [-j JOBS] [-k] [BUILD_DIR [TARGET...]]
#
#   -t SECONDS  how long each target runs (default 20)
#   -j JOBS     targets run at once (default 1)
#   -k          keep the grown corpora and the logs (their directory is printed)
#   BUILD_DIR   the build (default $NICER_SANITIZE_BUILD_DIR, else build-sanitize in the source tree)
#   TARGET      names such as Url or fuzz_Url (default: every fuzz_* in BUILD_DIR/tests/fuzz)
#
# What a target finds in this run is saved in BUILD_DIR/fuzz-findings/<target>/, and the command that replays
# it is printed. A target's dictionary, tests/fuzz/<Name>.dict, is used when there is one.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=20
jobs=1
keep=0
while getopts "t:j:k" option; do
    case $option in
    t) seconds=$OPTARG ;;
    j) jobs=$OPTARG ;;
    k) keep=1 ;;
    *)
        sed -n '6,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
        exit 2
        ;;
    esac
done
shift $((OPTIND - 1))
build=${1:-${NICER_SANITIZE_BUILD_DIR:-$root/build-sanitize}}
[ $# -gt 0 ] && shift

targets=()
if [ $# -gt 0 ]; then
    for name in "$@"; do
        targets+=("fuzz_${name#fuzz_}")
    done
else
    for binary in "$build"/tests/fuzz/fuzz_*; do
        [ -x "$binary" ] && targets+=("$(basename "$binary")")
    done
fi
if [ ${#targets[@]} -eq 0 ]; then
    echo "fuzz: no fuzz targets in $build/tests/fuzz: build them first" \
        "(cmake --build $build --target nicer_fuzzers)" >&2
    exit 2
fi

# The corpora and the targets' scratch files (TMPDIR) in memory where there is a tmpfs.
tmp=${TMPDIR:-/tmp}
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    tmp=/dev/shm
fi
work=$(mktemp -d "$tmp/nicer-fuzz.XXXXXX")
mkdir "$work/tmp"
export TMPDIR=$work/tmp
if [ "$keep" -eq 0 ]; then
    trap 'rm -rf "$work"' EXIT
fi
findings=$build/fuzz-findings

# A sanitizer report ends the run (libFuzzer then exits non-zero); leaks are reported by LeakSanitizer.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# run_one TARGET: fuzzes it; its summary line goes to $work/TARGET.summary, its status to $work/TARGET.status.
run_one() {
    local target=$1 name=${1#fuzz_}
    local binary=$build/tests/fuzz/$target
    local log=$work/$target.log corpus=$work/$target.corpus
    rm -rf "${findings:?}/$target"
    mkdir -p "$corpus" "$findings/$target"
    if [ -d "$here/corpus/$name" ]; then
        cp -r "$here/corpus/$name/." "$corpus/"
    fi
    local args=(-max_total_time="$seconds" -timeout=25 -print_final_stats=1
        -artifact_prefix="$findings/$target/")
    if [ -f "$here/$name.dict" ]; then
        args+=(-dict="$here/$name.dict")
    fi
    local status=0
    if [ ! -x "$binary" ]; then
        echo "no such target: $binary" >"$log"
        status=2
    else
        "$binary" "${args[@]}" "$corpus" >"$log" 2>&1 || status=$?
    fi
    echo "$status" >"$work/$target.status"

    local execs rate done_line cov ft units
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    done_line=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
    units=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$done_line")
    printf '%-22s %-6s %10s execs %7s/s  cov %5s  ft %6s  corpus %5s\n' "$name" \
        "$([ "$status" -eq 0 ] && echo ok || echo FAIL)" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
        "${units:-?}" >"$work/$target.summary"
}

echo "fuzz: ${#targets[@]} targets, ${seconds} s each, $jobs at a time, from $build" >&2
running=0
for target in "${targets[@]}"; do
    run_one "$target" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait

failed=()
for target in "${targets[@]}"; do
    cat "$work/$target.summary"
    if [ "$(cat "$work/$target.status")" -ne 0 ]; then
        failed+=("$target")
    fi
done

for target in "${failed[@]}"; do
    echo >&2
    echo "fuzz: $target FAILED; the end of its report:" >&2
    grep -v -E '^(#[0-9]+|\s*NEW_FUNC)' "$work/$target.log" | tail -n 40 >&2
    for artifact in "$findings/$target"/*; do
        [ -f "$artifact" ] && echo "fuzz: replay with: $build/tests/fuzz/$target $artifact" >&2
    done
done
if [ "$keep" -eq 1 ]; then
    echo "fuzz: the grown corpora and logs are in $work" >&2
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]#fuzz_}" >&2
    exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds} s each without a finding" >&2
