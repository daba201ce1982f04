#!/bin/sh
# expect-violation.sh CHECK GRAPH SOURCE_DIR: copies core/ and app/, makes net/fetch include the daemon (an
# include upwards) and expects check-layers.py to fail and name that line.
set -eu
check=$1 graph=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/core" "$src/app" "$tmp/"
printf '#include "daemon/Daemon.h"\n' >>"$tmp/core/net/fetch/Url.cpp"
if python3 "$check" "$graph" "$tmp" >"$tmp/out" 2>&1; then
    cat "$tmp/out"
    echo "expect-violation: FAIL: check-layers.py passed a tree where core/net/fetch includes daemon/Daemon.h"
    exit 1
fi
cat "$tmp/out"
grep -q 'core/net/fetch/Url.cpp:[0-9]*: includes daemon/Daemon.h, but core/net/fetch may not use core/daemon' "$tmp/out"
