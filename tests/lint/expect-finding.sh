#!/bin/sh
# expect-finding.sh SOURCE_DIR: the lint must fail on a finding. clang-tidy with SOURCE_DIR/.clang-tidy over a
# small file with a variable left uninitialised and an if without braces must exit non-zero and name both;
# and so must a unity build's batch that includes that file, with the header filter the lint uses (in a unity
# build the lint reads the batches, and their .cpp files are headers to clang-tidy).
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
printf '#include "%s/planted.cpp"\n' "$dir" >"$dir/unity_0_cxx.cxx"
for file in planted.cpp unity_0_cxx.cxx; do
    if "$tidy" --quiet --config-file="$src/.clang-tidy" --header-filter="^$dir/" "$dir/$file" -- -std=c++20 \
        >"$dir/out" 2>&1; then
        cat "$dir/out"
        echo "expect-finding.sh: clang-tidy passed $file with findings: WarningsAsErrors does not hold" >&2
        exit 1
    fi
    cat "$dir/out"
    for check in cppcoreguidelines-init-variables readability-braces-around-statements; do
        grep -q "planted.cpp:.*error: .*\[$check" "$dir/out" || {
            echo "expect-finding.sh: no error from $check in $file" >&2
            exit 1
        }
    done
done
echo "expect-finding.sh: clang-tidy failed on the planted findings, as it must"
