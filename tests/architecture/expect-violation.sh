#!/bin/sh
# expect-violation.sh CHECK GRAPH SOURCE_DIR: plants wrong includes in copies of core/ and app/ and expects
# check-layers.py to fail on each and name the line:
#   - net/fetch includes the daemon (an include upwards);
#   - the CLI includes kernel/ProcStat.h, a layer it reaches through cpu but does not declare (a layer's
#     DEPENDS must name what it includes, not only what it links through others).
set -eu
check=$1 graph=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect_violation FILE INCLUDE EXPECTED: FILE (under the copy) with INCLUDE appended must fail the check
# with a line matching EXPECTED.
expect_violation() {
    rm -rf "$tmp/tree"
    mkdir "$tmp/tree"
    cp -r "$src/core" "$src/app" "$tmp/tree/"
    printf '#include "%s"\n' "$2" >>"$tmp/tree/$1"
    if python3 "$check" "$graph" "$tmp/tree" >"$tmp/out" 2>&1; then
        cat "$tmp/out"
        echo "expect-violation: FAIL: check-layers.py passed a tree where $1 includes $2"
        exit 1
    fi
    cat "$tmp/out"
    if ! grep -q "$3" "$tmp/out"; then
        echo "expect-violation: FAIL: check-layers.py did not name $1's include of $2"
        exit 1
    fi
}

expect_violation core/net/fetch/Url.cpp daemon/Daemon.h \
    'core/net/fetch/Url.cpp:[0-9]*: includes daemon/Daemon.h, but core/net/fetch may not use core/daemon'
expect_violation app/cli/SampleCommand.cpp kernel/ProcStat.h \
    'app/cli/SampleCommand.cpp:[0-9]*: includes kernel/ProcStat.h, but app/cli does not declare core/kernel'
echo "expect-violation: ok: the check fails on an include upwards and on an undeclared layer's"
