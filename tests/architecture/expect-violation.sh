#!/bin/sh
# expect-violation.sh CHECK GRAPH SOURCE_DIR: plants wrong includes in copies of core/ and app/ and expects
# check-layers.py to fail on each and name the line:
#   - net/fetch includes the daemon (an include upwards);
#   - the CLI includes kernel/ProcStat.h, a layer it reaches through cpu but does not declare (a layer's
#     DEPENDS must name what it includes, not only what it links through others);
#   - the daemon includes app/options, the options the front ends share (nothing in core/ may use app/);
# and a graph where a core/ layer declares app/options, which the check must refuse.
set -eu
check=$1 graph=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect_failure GRAPH TREE EXPECTED WHAT: the check must fail on TREE against GRAPH, with a line matching
# EXPECTED.
expect_failure() {
    if python3 "$check" "$1" "$2" >"$tmp/out" 2>&1; then
        cat "$tmp/out"
        echo "expect-violation: FAIL: check-layers.py passed $4"
        exit 1
    fi
    cat "$tmp/out"
    if ! grep -q "$3" "$tmp/out"; then
        echo "expect-violation: FAIL: check-layers.py did not name $4"
        exit 1
    fi
}

# expect_violation FILE INCLUDE EXPECTED: FILE (under the copy) with INCLUDE appended must fail the check
# with a line matching EXPECTED.
expect_violation() {
    rm -rf "$tmp/tree"
    mkdir "$tmp/tree"
    cp -r "$src/core" "$src/app" "$tmp/tree/"
    printf '#include "%s"\n' "$2" >>"$tmp/tree/$1"
    expect_failure "$graph" "$tmp/tree" "$3" "$1's include of $2"
}

expect_violation core/net/fetch/Url.cpp daemon/Daemon.h \
    'core/net/fetch/Url.cpp:[0-9]*: includes daemon/Daemon.h, but core/net/fetch may not use core/daemon'
expect_violation app/cli/SampleCommand.cpp kernel/ProcStat.h \
    'app/cli/SampleCommand.cpp:[0-9]*: includes kernel/ProcStat.h, but app/cli does not declare core/kernel'
expect_violation core/daemon/DaemonConfig.cpp options/ControllerOptions.h \
    'core/daemon/DaemonConfig.cpp:[0-9]*: includes options/ControllerOptions.h, but core/daemon may not use app/options'

sed 's|^core/daemon:|core/daemon:app/options |' "$graph" >"$tmp/graph"
expect_failure "$tmp/graph" "$src" 'layer core/daemon depends on app/options, but nothing in core/ may use app/' \
    "core/daemon's edge to app/options in the graph"
echo "expect-violation: ok: the check fails on an include upwards, on an undeclared layer's, on core/ including"
echo "app/, and on core/ declaring app/"
