#!/bin/sh
# expect-finding.sh SOURCE_DIR: the lint must fail on a finding. clang-tidy with SOURCE_DIR/.clang-tidy over a
# small file with a variable left uninitialised and an if without braces must exit non-zero and name both.
set -eu
src=$1
tidy=$(command -v clang-tidy-14 || command -v clang-tidy) || {
    echo "expect-finding.sh: clang-tidy is not installed (Debian package clang-tidy)" >&2
    exit 1
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/planted.cpp" <<'CPP'
int planted(int flag) {
    int value;
    if (flag > 0) value = flag;
    else value = 0;
    return value;
}
CPP
if "$tidy" --quiet --config-file="$src/.clang-tidy" "$dir/planted.cpp" -- -std=c++20 >"$dir/out" 2>&1; then
    cat "$dir/out"
    echo "expect-finding.sh: clang-tidy passed a file with findings: WarningsAsErrors does not hold" >&2
    exit 1
fi
cat "$dir/out"
for check in cppcoreguidelines-init-variables readability-braces-around-statements; do
    grep -q "error: .*\[$check" "$dir/out" || {
        echo "expect-finding.sh: no error from $check" >&2
        exit 1
    }
done
echo "expect-finding.sh: clang-tidy failed on the planted findings, as it must"
