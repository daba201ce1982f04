#!/bin/sh
# clang-tidy.sh SOURCE_DIR BUILD_DIR: clang-tidy 14 over every .cpp of core/ and app/, with the checks and
# WarningsAsErrors of SOURCE_DIR/.clang-tidy and the compile commands of BUILD_DIR (CMake writes
# compile_commands.json). Generated files (Qt's moc and autogen, the D-Bus proxy) live in BUILD_DIR, outside
# core/ and app/, so neither the file list nor the header filter reaches them. Fails on any finding.
set -eu
src=$1
build=$2
tidy=$(command -v clang-tidy-14 || command -v clang-tidy) || {
    echo "clang-tidy.sh: clang-tidy is not installed (Debian package clang-tidy)" >&2
    exit 1
}
runner=$(command -v run-clang-tidy-14 || command -v run-clang-tidy)
# Paths in compile_commands.json are absolute; match them from the source dir on.
prefix=$(cd "$src" && pwd)
exec "$runner" -clang-tidy-binary "$tidy" -p "$build" -j "${NICER_LINT_JOBS:-2}" -quiet \
    -header-filter "^$prefix/(core|app)/" "^$prefix/(core|app)/.*\.cpp\$"
