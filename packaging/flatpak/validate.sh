#!/bin/bash
# The checks of the flatpak that need neither the network nor the KDE runtime:
#   1. the manifest is YAML and says what docs/packaging.md promises (app id, runtime, command, the sandbox's
#      permissions and the ones it must not have, the nicer module, pinned archive sources);
#   2. flatpak-builder reads it without unknown properties;
#   3. desktop-file-validate passes the desktop entry;
#   4. appstreamcli passes the AppStream metainfo (offline), filled in as CMake's configure_file would.
# It runs every check and exits 1 if any failed, naming each.
#
# Debian packages (packaging/dev.sh installs them; the test suite runs this script): python3, python3-yaml,
# desktop-file-utils, appstream, flatpak-builder.
#   apt-get install -y --no-install-recommends python3 python3-yaml desktop-file-utils appstream flatpak-builder
set -u

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
manifest=$root/packaging/flatpak/org.nicer.Tray.yml
desktop=$root/resources/org.nicer.Tray.desktop
metainfo=$root/resources/org.nicer.Tray.metainfo.xml

failed=()
pass() { printf 'ok    %s\n' "$1"; }
fail() { printf 'FAIL  %s\n' "$1"; failed+=("$1"); }
need() { # need COMMAND PACKAGE: true if COMMAND exists, else a failure naming the Debian package
    command -v "$1" >/dev/null 2>&1 && return 0
    fail "$2: '$1' is not installed (apt-get install $3)"
    return 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The manifest's syntax and content.
if [ ! -f "$manifest" ]; then
    fail "manifest: $manifest is missing"
elif need /usr/bin/python3 manifest python3 && /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
    if out=$(/usr/bin/python3 - "$manifest" <<'EOF' 2>&1
import re, sys, yaml

problems = []
try:
    with open(sys.argv[1]) as f:
        m = yaml.safe_load(f)
except yaml.YAMLError as e:
    print(f"not valid YAML: {e}")
    sys.exit(1)
if not isinstance(m, dict):
    print("the manifest is not a mapping")
    sys.exit(1)

expect = {"id": "org.nicer.Tray", "runtime": "org.kde.Platform", "sdk": "org.kde.Sdk", "command": "nicer-tray"}
for key, value in expect.items():
    if m.get(key) != value:
        problems.append(f"{key} is {m.get(key)!r}, expected {value!r}")
version = str(m.get("runtime-version", ""))
if not re.fullmatch(r"6\.\d+", version):
    problems.append(f"runtime-version is {version!r}, expected a quoted KDE 6.x branch such as '6.10'")
if not isinstance(m.get("runtime-version"), str):
    problems.append("runtime-version must be a string (quote it: '6.10', not 6.10, which YAML reads as 6.1)")

args = m.get("finish-args")
if not isinstance(args, list):
    problems.append("finish-args is missing or not a list")
    args = []
for wanted in ["--socket=wayland", "--socket=fallback-x11", "--share=ipc",
               "--talk-name=org.nicer.Daemon", "--talk-name=org.kde.StatusNotifierWatcher"]:
    if wanted not in args:
        problems.append(f"finish-args lacks {wanted}")
for arg in args:
    if "org.freedesktop.systemd1" in arg:
        problems.append(f"finish-args has {arg}: no systemd1 in the tray-only flatpak (docs/packaging.md)")
    if arg.startswith("--filesystem"):
        problems.append(f"finish-args has {arg}: the tray needs no file access")
    if arg == "--share=network":
        problems.append("finish-args has --share=network: the tray talks only to the session bus")
    if arg in ("--socket=session-bus", "--socket=system-bus", "--socket=x11"):
        problems.append(f"finish-args has {arg}: too broad for the tray")
    if arg.startswith("--own-name=org.nicer.Tray"):
        problems.append(f"finish-args has {arg}: the app id's name is granted anyway (Flathub lint error)")

modules = m.get("modules")
if not isinstance(modules, list) or not modules:
    problems.append("modules is missing or empty")
    modules = []
for module in modules:
    if not isinstance(module, dict):
        continue  # a string names a module file; none is used here
    for source in module.get("sources", []):
        if source.get("type") in ("archive", "file"):
            sha = str(source.get("sha256", ""))
            if not source.get("url"):
                problems.append(f"module {module.get('name')}: an {source['type']} source without url")
            if not re.fullmatch(r"[0-9a-f]{64}", sha):
                problems.append(f"module {module.get('name')}: source {source.get('url')} has no sha256 "
                                f"pin ({sha or 'none'})")
        if source.get("type") == "git" and not source.get("commit"):
            problems.append(f"module {module.get('name')}: git source {source.get('url')} without commit")

nicer = modules[-1] if modules and isinstance(modules[-1], dict) else {}
if nicer.get("name") != "nicer":
    problems.append("the last module must be nicer")
if nicer.get("buildsystem") != "cmake-ninja":
    problems.append(f"module nicer: buildsystem {nicer.get('buildsystem')!r}, expected 'cmake-ninja'")
for opt in ["-DCMAKE_BUILD_TYPE=Release", "-DNICER_BUILD_TESTS=OFF", "-DNICER_TRAY_ONLY=ON"]:
    if opt not in nicer.get("config-opts", []):
        problems.append(f"module nicer: config-opts lack {opt}")
if not any(s.get("type") == "dir" and s.get("path") == "../.." for s in nicer.get("sources", [])):
    problems.append("module nicer: no dir source with path ../.. (the repository root)")

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
EOF
    ); then
        pass "manifest: YAML, app id, runtime $(sed -n "s/^runtime-version: *//p" "$manifest"), permissions, pinned sources"
    else
        while IFS= read -r line; do fail "manifest: $line"; done <<<"$out"
    fi
else
    fail "manifest: python3 cannot import yaml (apt-get install python3-yaml)"
fi

# 2. flatpak-builder's own reading of the manifest: it warns about unknown properties but still exits 0.
if [ -f "$manifest" ] && need flatpak-builder "flatpak-builder --show-manifest" flatpak-builder; then
    if ! (cd "$work" && flatpak-builder --show-manifest "$manifest" >"$work/shown.json" 2>"$work/shown.err"); then
        fail "flatpak-builder --show-manifest: $(tr '\n' ' ' <"$work/shown.err")"
    elif grep -q 'Unknown property' "$work/shown.err"; then
        fail "flatpak-builder --show-manifest: $(grep -o 'Unknown property .*' "$work/shown.err" | sort -u |
            paste -sd ';')"
    else
        pass "flatpak-builder --show-manifest ($(flatpak-builder --version))"
    fi
fi

# 3. The desktop entry that the flatpak exports.
if [ ! -f "$desktop" ]; then
    fail "desktop entry: $desktop is missing"
elif need desktop-file-validate "desktop entry" desktop-file-utils; then
    # Its exit status decides, as in tests/packaging/install-deb.sh; hints are shown, not counted.
    if out=$(desktop-file-validate "$desktop" 2>&1); then
        pass "desktop-file-validate resources/org.nicer.Tray.desktop${out:+ (with hints: $(grep -c . <<<"$out"))}"
        [ -z "$out" ] || while IFS= read -r line; do printf '      %s\n' "$line"; done <<<"$out"
    else
        fail "desktop-file-validate: $(tr '\n' ' ' <<<"$out")"
    fi
fi

# 4. The AppStream metainfo. It is a configure_file template (@NICER_HOMEPAGE@ ...): fill each @VAR@ with the
#    default that resources/CMakeLists.txt sets, as the build does, and validate the result offline.
if [ ! -f "$metainfo" ]; then
    fail "metainfo: $metainfo is missing: the flatpak installs it into share/metainfo, and Flathub takes no app without it"
elif need appstreamcli metainfo appstream; then
    filled=$work/org.nicer.Tray.metainfo.xml
    cp "$metainfo" "$filled"
    unfilled=()
    for var in $(grep -o '@[A-Za-z_][A-Za-z0-9_]*@' "$metainfo" | sort -u | tr -d @); do
        if [ "$var" = PROJECT_VERSION ]; then # project(nicer VERSION x.y.z ...), over one or more lines
            value=$(tr '\n' ' ' <"$root"/CMakeLists.txt | grep -o 'project( *nicer[^)]*VERSION *[0-9.]*' |
                grep -o '[0-9.]*$' | head -n1)
        else # set(VAR "default" CACHE ...)
            value=$(sed -n "s/^ *set( *$var \"\([^\"]*\)\".*/\1/p" "$root"/CMakeLists.txt \
                "$root"/resources/CMakeLists.txt | head -n1)
        fi
        if [ -z "$value" ]; then
            unfilled+=("$var")
            continue
        fi
        sed -i "s|@$var@|$value|g" "$filled"
    done
    if [ ${#unfilled[@]} -gt 0 ]; then
        fail "metainfo: no value found in CMakeLists.txt for @${unfilled[*]}@"
    elif out=$(appstreamcli validate --no-net "$filled" 2>&1); then
        pass "appstreamcli validate --no-net resources/org.nicer.Tray.metainfo.xml ($(tail -n1 <<<"$out"))"
    else
        fail "appstreamcli validate --no-net: $(tr '\n' ' ' <<<"$out")"
    fi
    # The ids that tie the three files together.
    if ! grep -q '<id>org.nicer.Tray</id>' "$metainfo"; then
        fail "metainfo: its <id> is not org.nicer.Tray, the flatpak's app id"
    fi
    if ! grep -q '<launchable type="desktop-id">org.nicer.Tray.desktop</launchable>' "$metainfo"; then
        fail "metainfo: no <launchable type=\"desktop-id\">org.nicer.Tray.desktop</launchable>"
    fi
fi

if [ ${#failed[@]} -gt 0 ]; then
    printf '\n%d check(s) failed.\n' "${#failed[@]}"
    exit 1
fi
printf '\nAll offline checks passed (the build itself needs the KDE runtime: see docs/packaging.md).\n'
