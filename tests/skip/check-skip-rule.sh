#!/bin/sh
# check-skip-rule.sh CASES: runs each case of skip_rule_cases.cpp (the executable CASES) and checks NICER_SKIP's
# rule: a clean skip exits 0 and prints the marker ctest skips on; a skip with a failed assertion before or
# after it exits non-zero without the marker. This test must not carry SKIP_REGULAR_EXPRESSION: the marker
# is in its output when the clean case works.
set -eu
cases=$1
marker=NICER-TEST-SKIPPED
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failures=0

# expect NAME skipped|failed: runs the case NAME and checks it ended as said.
expect() {
    status=0
    "$cases" "$1" >"$out" 2>&1 || status=$?
    if [ "$2" = skipped ]; then
        # The reason, then the case's name (a run of the whole executable tells which case skipped).
        [ "$status" -eq 0 ] && grep -qxF "$marker the prerequisite is missing 42 ($1)" "$out"
    else
        [ "$status" -ne 0 ] && ! grep -q "$marker" "$out" &&
            grep -q "^Not skipped (the prerequisite is missing): 1 assertion(s)" "$out"
    fi && echo "ok: \"$1\" $2" && return
    echo "FAIL: \"$1\" should have $2 (exit $status):"
    cat "$out"
    failures=$((failures + 1))
}

expect "a test case whose prerequisite is missing skips" skipped
expect "a test case with a failed CHECK before its skip fails" failed
expect "a test case with a failed CHECK after its skip fails" failed
[ "$failures" -eq 0 ]
