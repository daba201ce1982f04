#!/usr/bin/env bash
# Two dev.sh commands on a fresh machine configure the build the same way: the second has nothing to build.
# On a fresh Debian 12 the README's commands once configured the first build without ccache (dev.sh looked for
# it before installing its packages) and the second with it, so the second rebuilt everything (issue 28).
#
# The fresh-machine condition, for real: ccache is removed with apt (as a fresh machine lacks it) and the build
# directory is new. Then `dev.sh build nicer_util` twice (one small library keeps it to about a minute; the
# configuration is the whole project's): the first must install ccache again and compile, the second must find
# no work. ccache is put back even if the test fails. Needs root (apt) and Debian's archive, as dev.sh does.
#
# Usage:  tests/packaging/dev-build-twice.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "dev-build-twice: needs root (apt-get remove ccache)" >&2; exit 2; }
work=$(mktemp -d)
cleanup() {
    dpkg-query -W -f='${db:Status-Status}' ccache 2>/dev/null | grep -qx installed ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ccache >/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "dev-build-twice: FAILED: $*" >&2
    exit 1
}

if dpkg-query -W -f='${db:Status-Status}' ccache 2>/dev/null | grep -qx installed; then
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq ccache >/dev/null
fi
! command -v ccache >/dev/null || fail "ccache is still on the PATH after its removal: $(command -v ccache)"
echo "dev-build-twice: ccache removed; two dev.sh build in the new build directory $work/build" >&2

NICER_BUILD_DIR=$work/build "$root/packaging/dev.sh" build nicer_util >"$work/first.log" 2>&1 ||
    { tail -n 30 "$work/first.log" >&2; fail "the first dev.sh build"; }
command -v ccache >/dev/null || fail "the first dev.sh build did not install ccache"
grep -q 'Building CXX object' "$work/first.log" || fail "the first dev.sh build compiled nothing: the check proves nothing"
NICER_BUILD_DIR=$work/build "$root/packaging/dev.sh" build nicer_util >"$work/second.log" 2>&1 ||
    { tail -n 30 "$work/second.log" >&2; fail "the second dev.sh build"; }
if ! grep -q '^ninja: no work to do' "$work/second.log"; then
    grep -E '^\[[0-9]+/[0-9]+\]' "$work/second.log" | head -n 10 >&2
    fail "the second dev.sh build had work to do: $(grep -c 'Building CXX object' "$work/second.log") compilations"
fi
echo "dev-build-twice: the first compiled $(grep -c 'Building CXX object' "$work/first.log") files, the second nothing"
echo "dev-build-twice: 1 passed, 0 failed"
