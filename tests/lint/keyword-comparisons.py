#!/usr/bin/env python3
"""keyword-comparisons.py SOURCE_DIR: no comparison of a string with a keyword in core/ and app/ but those listed.

A state with keywords is an enum with one table of its keywords (docs/architecture.md, "Keywords once, at the
edges"), and the code compares the enum. The comparisons with a string literal that remain read a format that
is not nicer's own (systemd's property and state names, the kernel's files, HTTP, BOINC's replies, the words of
a command line or a config file) or ours at its one parser: each is listed, with its file, in
keyword-comparisons.allow beside this script. A comparison that is not listed fails the check, with what to do;
so does a listed one that is no longer there, so that the list stays true. `== ""` is no keyword and is not
counted.
"""
import pathlib
import re
import sys

COMPARISON = re.compile(r'(?:==|!=)\s*"((?:[^"\\]|\\.)*)"|"((?:[^"\\]|\\.)*)"\s*(?:==|!=)')
ALLOW_LINE = re.compile(r'^(\S+)\s+"((?:[^"\\]|\\.)*)"\s*(?:#.*)?$')


def comparisons(root):
    """(file, literal) -> the first line it is on, for every comparison with a literal in core/ and app/."""
    found = {}
    for folder in ("core", "app"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cpp", ".h"):
                continue
            relative = path.relative_to(root).as_posix()
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("//", 1)[0] if not line.lstrip().startswith("//") else ""
                for match in COMPARISON.finditer(code):
                    literal = match.group(1) if match.group(1) is not None else match.group(2)
                    if literal:
                        found.setdefault((relative, literal), number)
    return found


def allowed(path):
    entries = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = ALLOW_LINE.match(line)
        if not match:
            sys.exit(f"{path}:{number}: not 'FILE \"LITERAL\"  # why': {line}")
        entries.add((match.group(1), match.group(2)))
    return entries


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1])
    allow_file = pathlib.Path(__file__).with_suffix(".allow")
    found = comparisons(root)
    allow = allowed(allow_file)
    new = sorted(key for key in found if key not in allow)
    gone = sorted(allow - found.keys())
    for relative, literal in new:
        print(f'{relative}:{found[(relative, literal)]}: compares a string with the keyword "{literal}": if it '
              "is a state of nicer's, compare its enum (its keyword belongs in the enum's table, read only at "
              "the codec, the config parser and --json); if it reads a format that is not nicer's, list it in "
              f"{allow_file.name} with why")
    for relative, literal in gone:
        print(f'{allow_file.name}: {relative} "{literal}" is listed but no longer compared there: remove it')
    if new or gone:
        return 1
    print(f"{len(found)} comparisons with a literal in core/ and app/, each listed with why")
    return 0


if __name__ == "__main__":
    sys.exit(main())
