#!/bin/sh
# clang-tidy.sh SOURCE_DIR BUILD_DIR: clang-tidy 14 over every .cpp of core/ and app/, with the checks and
# WarningsAsErrors of SOURCE_DIR/.clang-tidy and the compile commands of BUILD_DIR (CMake writes
# compile_commands.json). In a unity build (NICER_UNITY_BUILD, the default) those commands compile the
# batches CMake writes into BUILD_DIR (.../Unity/unity_N_cxx.cxx, each including up to 8 of the .cpp files),
# so the lint reads the batches of core/'s and app/'s targets: every .cpp once, and the headers once a batch.
# Generated files (Qt's moc and autogen, the D-Bus proxy) live in BUILD_DIR outside those batches, and the
# header filter (SOURCE_DIR's core/ and app/) keeps their findings out. Fails on any finding.
set -eu
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
tidy=$(command -v clang-tidy-14 || command -v clang-tidy) || {
    echo "clang-tidy.sh: clang-tidy is not installed (Debian package clang-tidy)" >&2
    exit 1
}
runner=$(command -v run-clang-tidy-14 || command -v run-clang-tidy)
# The configuration is passed, not looked up beside each file: the batches are not under SOURCE_DIR. YAML's
# end-of-document line is not accepted on the command line.
config=$(sed '/^\.\.\.$/d' "$src/.clang-tidy")
exec "$runner" -clang-tidy-binary "$tidy" -p "$build" -j "${NICER_LINT_JOBS:-2}" -quiet -config "$config" \
    -header-filter "^$src/(core|app)/" "^($src/(core|app)/.*\.cpp|$build/(core|app)/.*/Unity/unity_[0-9]+_cxx\.cxx)\$"
