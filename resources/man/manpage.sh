#!/usr/bin/env bash
# Write a gzipped manual page for one of nicer's programs from its own --help and --version (help2man), so the
# page and the help never disagree. Each subcommand's --help becomes a section; NAME.h2m beside this script adds
# what --help does not say (files, environment, see also).
#
# Usage:  resources/man/manpage.sh OUT.1.gz PROGRAM "one-line description" [SUBCOMMAND...]
set -euo pipefail

[ $# -ge 3 ] || { sed -n '2,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out=$1 program=$2 description=$3
shift 3
name=$(basename "$program")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Defaults that name the builder's home appear as ~ in the page; Qt programs need no display for --help.
export HOME='~' XDG_CONFIG_HOME= XDG_STATE_HOME= XDG_DATA_HOME= QT_QPA_PLATFORM=offscreen LC_ALL=C.UTF-8
mkdir -m 0700 "$work/runtime"
export XDG_RUNTIME_DIR=$work/runtime
ln -s "$(realpath "$program")" "$work/$name"

include=$work/include.h2m
[ -f "$here/$name.h2m" ] && cp "$here/$name.h2m" "$include" || : >"$include"
for sub in "$@"; do
    printf '[>COMMANDS]\n.SS "%s %s"\n.nf\n' "$name" "$sub" >>"$include"
    "$work/$name" "$sub" --help | sed -e "s|$work/||" -e '1,/^Usage:/{/^Usage:/!d}' -e 's/\\/\\e/g' -e 's/^\./\\\&./' >>"$include"
    printf '.fi\n' >>"$include"
done

help2man --no-info --no-discard-stderr --name="$description" --include="$include" "$work/$name" >"$work/page.1"
gzip -9n <"$work/page.1" >"$out.tmp"
mv "$out.tmp" "$out"
