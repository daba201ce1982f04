#!/usr/bin/env bash
# expect-keyword-finding.sh SOURCE_DIR: keyword-comparisons.py must fail on a comparison with a keyword that is
# not listed, and name it: the check run over a copy of core/ and app/ with one planted.
set -euo pipefail
src=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -r "$src/core" "$src/app" "$dir/"
printf '#include <string>\nbool planted(const std::string& state) { return state == "planted-state"; }\n' \
    >"$dir/core/Planted.cpp"
if out=$("$src/tests/lint/keyword-comparisons.py" "$dir" 2>&1); then
    echo "expect-keyword-finding.sh: the check passed with a planted comparison: $out" >&2
    exit 1
fi
if ! grep -q '^core/Planted.cpp:2: compares a string with the keyword "planted-state"' <<<"$out"; then
    echo "expect-keyword-finding.sh: the check failed, but not on the planted comparison:" >&2
    echo "$out" >&2
    exit 1
fi
echo "the check fails on a planted comparison and names it"
