#!/usr/bin/env bash
# Show that packaging/check-deps.py catches a missing package: run it with PKG taken out of dev.sh's list and
# pass only if it fails (exit 1, not a usage error) and tells to add PKG.
#
# Usage:  tests/packaging/expect-uncovered.sh PKG CHECK_DEPS BUILD_DIR
set -uo pipefail

[ $# -eq 3 ] || { sed -n '2,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
pkg=$1 check=$2 build=$3

out=$("$check" --without "$pkg" "$build" 2>&1)
status=$?
printf '%s\n' "$out"
if [ "$status" -ne 1 ]; then
    echo "expect-uncovered: check-deps.py --without $pkg exited $status, expected 1 (a package not covered)" >&2
    exit 1
fi
if ! grep -qxF "    fix: add $pkg to packages in packaging/dev.sh" <<<"$out"; then
    echo "expect-uncovered: check-deps.py --without $pkg failed, but did not name $pkg as the fix" >&2
    exit 1
fi
echo "expect-uncovered: without $pkg the check fails and names it, as it should"
