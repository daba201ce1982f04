#!/usr/bin/env bash
# The .deb as a user gets it: build it, `apt-get install` it, run the INSTALLED programs (never the build tree),
# then `apt-get purge` it and check that no file it installed is left. Needs root (CI runs it after the tests).
#
# Usage:  tests/packaging/install-deb.sh [--deb FILE] [OUT_DIR]
#   --deb    the package to test (CI: the one `packaging/dev.sh test` built from the tested build); without it,
#            `packaging/dev.sh package` builds the release .deb in build-deb/
#   OUT_DIR  where the screenshot and logs go (default build-deb/)
#
# It covers: `nicer --version`, `nicer simulate` on a golden trace, nicerd started by D-Bus activation from the
# installed org.nicer.Daemon.service and nicerd.service under a private systemd user manager (hybrid cgroups
# on these machines), then `nicer status`; nicer-tray started from the installed desktop entry's Exec line on
# Xvfb with a tray host, a screenshot, and a second launch through D-Bus (org.freedesktop.Application.Activate
# on org.nicer.Tray) that must leave one process; lintian, desktop-file-validate and appstreamcli on the package;
# the maintainer scripts: they act only on the user managers the system manager runs (user@UID.service), so
# here, with no systemd as PID 1, a reinstall and a purge leave the private manager's nicerd alone, and a
# process posing as a user manager with a bus address that runs a program (as real uid 0) never gets that
# program run. Their work in the user managers, the restart on upgrade and the stop on purge, is checked in the
# Debian 12 guest under logind's user managers: tests/vm/run.sh.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deb=
if [ "${1:-}" = --deb ]; then
    deb=$(realpath -e "${2:?--deb needs a file}")
    shift 2
fi
out=$(mkdir -p "${1:-$root/build-deb}" && cd "${1:-$root/build-deb}" && pwd)
harness=$root/tests/harness
[ "$(id -u)" -eq 0 ] || { echo "install-deb: needs root (apt-get install/purge)" >&2; exit 2; }

step() { echo "install-deb: $*" >&2; }
fail() { echo "install-deb: FAILED: $*" >&2; exit 1; }
# Polls a command until it succeeds, for at most $1 tenths of a second.
wait_for() {
    local tries=$1
    shift
    for ((i = 0; i < tries; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
    return 1
}

# The package, built with Debian's flags.
if [ -z "$deb" ]; then
    "$root/packaging/dev.sh" package >"$out/package.log" 2>&1 || { tail -30 "$out/package.log"; fail "building the .deb"; }
    deb=$(ls -t "${NICER_DEB_BUILD_DIR:-$root/build-deb}"/nicer_*.deb | head -n1)
fi
version=$(dpkg-deb --field "$deb" Version)
step "testing $deb"
dpkg-deb --field "$deb" Depends Recommends >&2
dpkg-deb --field "$deb" Recommends | grep -qw boinc-client || fail "boinc-client is not a Recommends"

# The package's metadata, checked as a software centre and lintian would.
work=$(mktemp -d)
cleanup() {
    set +e
    if [ -n "${tray_host_pid:-}" ]; then kill "$tray_host_pid" 2>/dev/null; wait "$tray_host_pid" 2>/dev/null; fi
    if [ -n "${fake_pid:-}" ]; then kill "$fake_pid" 2>/dev/null; fi
    XDG_RUNTIME_DIR=$runtime systemctl --user stop nicerd.service 2>/dev/null
    XDG_RUNTIME_DIR=$runtime "$harness/user-manager.sh" stop 2>/dev/null
    if [ -n "${restore_run_systemd:-}" ]; then mkdir -p /run/systemd/system; fi
    if dpkg-query -W nicer >/dev/null 2>&1; then apt-get purge -y -qq nicer >/dev/null 2>&1; fi
    rm -rf "$work"
}
trap cleanup EXIT
runtime=$work/runtime
dpkg-deb -x "$deb" "$work/tree"
# No root, ever: nothing setuid or setgid, no system unit but the root idle slice's, and maintainer scripts that only reach the
# users' own managers as those users (stop, restart, reload: docs/packaging.md) and never give a file
# capabilities, an owner or a mode, nor run a program of the package.
if find "$work/tree" -perm /6000 | grep .; then fail "the package has setuid or setgid files"; fi
dpkg-deb -e "$deb" "$work/control"
for script in preinst config; do
    [ ! -e "$work/control/$script" ] || fail "the package has a $script script"
done
for script in prerm postrm postinst; do
    [ -x "$work/control/$script" ] || fail "the package has no $script script (it stops and restarts nicerd)"
    sh -n "$work/control/$script" || fail "the $script script is not valid sh"
    if grep -nE '\b(setcap|chmod|chown|chgrp|useradd|/usr/bin/nicer)' "$work/control/$script"; then
        fail "the $script script changes files or runs a program of the package as root"
    fi
done
# The system part (docs/placement.md) is the root idle slice, one template unit that runs as the user of its
# instance, with nothing of it as root (no "+" or "!" command prefixes, no other User=), its socket, and the
# drop-in that brings the socket with each user manager; no polkit rule.
system_units=$(cd "$work/tree" && find lib/systemd/system usr/lib/systemd/system -type f -printf '%P\n' 2>/dev/null | LC_ALL=C sort | tr '\n' ' ' || true)
[ "$system_units" = "nicer-work@.service nicer-work@.socket nicer.slice user@.service.d/nicer.conf " ] ||
    fail "the system units are not the root idle slice's four: $system_units"
for work_unit in "$work"/tree/{,usr/}lib/systemd/system/nicer-work@.service; do [ -f "$work_unit" ] && break; done
grep -qx 'User=%i' "$work_unit" || fail "nicer-work@.service does not run as the user of its instance (User=%i)"
if grep -nE '^(User=|Group=|Exec[A-Za-z]*=[-@:]*[+!]|PermissionsStartOnly|AmbientCapabilities|CapabilityBoundingSet)' "$work_unit" | grep -v 'User=%i'; then
    fail "nicer-work@.service runs something with privileges"
fi
[ ! -e "$work/tree/usr/share/polkit-1" ] || fail "the package installs polkit files: it grants nothing"
grep -qx 'BindsTo=user@%i.service' "$work_unit" || fail "nicer-work@.service does not end with its user's manager"
for script in prerm postrm postinst; do
    if sed 's/#.*//' "$work/control/$script" | grep -nE '/proc|\bcomm\b|environ|XDG_RUNTIME_DIR|setpriv|pgrep|pkill|\bkill\b'; then
        fail "the $script script reads processes or signals them"
    fi
done
step "no setuid or setgid file; the system part is the root idle slice, nicer-work@.service as its user, its socket and drop-in, no polkit rule; maintainer scripts that read no process"
desktop-file-validate "$work/tree/usr/share/applications/org.nicer.Tray.desktop"
appstreamcli validate --no-net "$work/tree/usr/share/metainfo/org.nicer.Tray.metainfo.xml"
lintian --info "$deb" | tee "$out/lintian.txt" >&2 || true
if grep -q '^E: ' "$out/lintian.txt"; then fail "lintian reports errors (docs/packaging.md explains the warnings kept)"; fi
step "lintian: $(grep -c '^E: ' "$out/lintian.txt" || true) errors, $(grep -c '^W: ' "$out/lintian.txt" || true) warnings"

# Package scripts of other packages (triggers) must not try to reach a systemd that is not PID 1.
if [ -d /run/systemd/system ]; then rmdir /run/systemd/system 2>/dev/null && restore_run_systemd=1 ||
    fail "/run/systemd/system is in use (a user manager from the tests still running?)"; fi
listing() {
    find /usr /etc /var/lib -xdev \( -path /var/lib/dpkg -o -path /var/lib/apt \) -prune -o -print | LC_ALL=C sort
}
listing >"$work/before"
step "apt-get install $deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >"$out/apt-install.log" 2>&1 ||
    { cat "$out/apt-install.log" >&2; fail "apt-get install"; }
dpkg -L nicer | LC_ALL=C sort >"$work/files"
if [ -n "${restore_run_systemd:-}" ]; then mkdir -p /run/systemd/system; restore_run_systemd=; fi

# The installed programs, from a directory that holds nothing of the build.
cd "$work"
[ "$(command -v nicer)" = /usr/bin/nicer ] || fail "nicer is not /usr/bin/nicer but $(command -v nicer)"
[ "$(nicer --version)" = "$version" ] || fail "nicer --version says '$(nicer --version)', not $version"
nicer simulate --trace "$root/tests/data/traces/overload-reset.txt" --reserve-band 0.125 --max-multiplier 8 \
    --overload-threshold 2 --idle-epsilon 0 --multiplier-decay 1 >"$work/simulate.csv"
cmp "$work/simulate.csv" "$root/tests/data/traces/overload-reset.expected.csv" || fail "nicer simulate differs"
step "nicer --version and nicer simulate: ok"
for page in nicer nicerd nicer-tray; do
    zcat "/usr/share/man/man1/$page.1.gz" | grep -q '^\.SH OPTIONS' || fail "man page of $page has no OPTIONS"
done

# nicerd by D-Bus activation under a private user manager: nothing of the build is in its unit or bus files.
export XDG_RUNTIME_DIR=$runtime
eval "$("$harness/user-manager.sh" start)"
if systemctl --user is-active --quiet nicerd.service; then fail "nicerd runs before anything asked for it"; fi
state=$work/state
mkdir -p "$state"
systemctl --user set-environment XDG_STATE_HOME="$state" XDG_CONFIG_HOME="$state" XDG_DATA_HOME="$state"
nicer status >"$out/nicer-status.txt" 2>&1 || { cat "$out/nicer-status.txt" >&2; fail "nicer status (D-Bus activation)"; }
cat "$out/nicer-status.txt" >&2
systemctl --user is-active --quiet nicerd.service || fail "nicerd.service is not active after activation"
main_pid=$(systemctl --user show -P MainPID nicerd.service)
[ "$(readlink "/proc/$main_pid/exe")" = /usr/bin/nicerd ] || fail "the activated nicerd is not /usr/bin/nicerd"
step "nicerd activated by D-Bus from the installed files (pid $main_pid), nicer status: ok"

# nicer-tray from its installed desktop entry, on Xvfb with a tray host.
exec_line=$(sed -n 's/^Exec=//p' /usr/share/applications/org.nicer.Tray.desktop | head -n1)
read -r -a tray_cmd <<<"${exec_line//%[a-zA-Z]/}"
step "starting the tray as the menu does: ${tray_cmd[*]}"
"$harness/xvfb-tray-host.sh" bash -c 'echo "$DISPLAY" >"$0"; exec "$@"' "$work/display" "${tray_cmd[@]}" \
    >"$out/tray.log" 2>&1 &
tray_host_pid=$!
wait_for 100 test -s "$work/display" || fail "the X server did not start"
export DISPLAY=$(cat "$work/display")
window_shown() { xwininfo -root -tree | grep -q '"nicer: spare CPU for volunteer computing"'; }
wait_for 300 window_shown || { cat "$out/tray.log" >&2; fail "the tray's window did not appear"; }
tray_pid=$(pgrep -x nicer-tray) || fail "no nicer-tray process"
[ "$(readlink "/proc/$tray_pid/exe")" = /usr/bin/nicer-tray ] || fail "the tray is not /usr/bin/nicer-tray"
# The picture shows a chart with points once nicerd has a few samples (the tray draws them from its history).
samples() { busctl --user call org.nicer.Daemon /org/nicer/Daemon org.nicer.Daemon1 GetHistory | awk '{ print $2 }'; }
has_samples() { [ "$(samples)" -ge 3 ]; }
wait_for 300 has_samples || fail "nicerd has $(samples) samples after 30 s"
import -display "$DISPLAY" -window root "$out/installed-tray.png"
step "screenshot of the installed tray: $out/installed-tray.png"
# A launcher honouring DBusActivatable=true calls Activate on org.nicer.Tray: the running tray must answer it.
busctl --user call org.nicer.Tray /org/nicer/Tray org.freedesktop.Application Activate 'a{sv}' 0 ||
    fail "the tray does not answer org.freedesktop.Application.Activate"
[ "$(pgrep -xc nicer-tray)" -eq 1 ] || fail "$(pgrep -xc nicer-tray) nicer-tray processes after Activate"
step "installed tray: ok"

# apt as root beside the private user manager: other packages' triggers must not find a systemd that is not
# PID 1 (the manager, once up, no longer needs /run/systemd/system).
apt_beside_manager() {
    rmdir /run/systemd/system
    local status=0
    DEBIAN_FRONTEND=noninteractive apt-get "$@" || status=$?
    mkdir -p /run/systemd/system
    return "$status"
}

# A process posing as a user manager, as an attacker with one sudo command can leave one: real uid 0, named
# systemd, with --user, and an XDG_RUNTIME_DIR whose bus address runs their program. The scripts never read it.
fake=$work/fake
mkdir -p "$fake/a;unixexec:path=$fake/b/systemd" "$fake/b"
printf '#!/bin/sh\ntouch %s/MARKER-RAN\n' "$fake" >"$fake/b/bus"
printf '#!/bin/sh\nwhile :; do sleep 60; done\n' >"$fake/systemd"
chmod 0755 "$fake/b/bus" "$fake/systemd"
python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$fake/a;unixexec:path=$fake/b/systemd/private"
XDG_RUNTIME_DIR="$fake/a;unixexec:path=$fake/b" setsid "$fake/systemd" --user </dev/null >/dev/null 2>&1 &
fake_pid=$!

# A reinstall (an upgrade runs the same scripts) and the purge, with the tray, nicerd and the work running in
# a manager that no system manager runs: the scripts leave it alone, and run nothing of the fake's.
wait_for 300 pgrep -x md5sum || fail "no work runs before the reinstall"
before_pid=$(systemctl --user show -P MainPID nicerd.service)
apt_beside_manager install -y -qq --reinstall --no-install-recommends "$deb" >"$out/apt-reinstall.log" 2>&1 ||
    { cat "$out/apt-reinstall.log" >&2; fail "apt-get install --reinstall"; }
[ "$(systemctl --user show -P MainPID nicerd.service)" = "$before_pid" ] ||
    fail "the reinstall reached a user manager that no system manager runs"
nicer_processes() { ps -eo pid=,comm= | awk '$2 ~ /^(nicerd|nicer-tray|md5sum)$/ { print $2 "(" $1 ")" }'; }
running_before=$(nicer_processes)
apt_beside_manager purge -y -qq nicer >"$out/apt-purge.log" 2>&1 || { cat "$out/apt-purge.log" >&2; fail "apt-get purge"; }
[ "$(nicer_processes)" = "$running_before" ] || fail "the purge reached a user manager that no system manager runs"
[ ! -e "$fake/MARKER-RAN" ] || fail "the maintainer scripts ran the program of a process posing as a user manager"
kill "$fake_pid" 2>/dev/null || true
step "reinstall and purge: the private manager left alone (nicerd $before_pid), the fake manager's program never run" $running_before
kill "$tray_host_pid" 2>/dev/null || true
wait "$tray_host_pid" 2>/dev/null || true
tray_host_pid=
systemctl --user stop nicerd.service nicer.slice
"$harness/user-manager.sh" stop
rmdir /run/systemd/system 2>/dev/null && restore_run_systemd=1 || true

# Purge: nothing the package installed is left, and nothing else changed.
left=$(while read -r f; do [ "$f" = /. ] || [ ! -e "$f" ] || [ -d "$f" ] || echo "$f"; done <"$work/files")
[ -z "$left" ] || fail "files left after purge: $left"
listing >"$work/after"
if ! diff -u "$work/before" "$work/after" >"$out/purge.diff"; then
    cat "$out/purge.diff" >&2
    fail "the file system differs after install and purge"
fi
step "purge left nothing ($(wc -l <"$work/files") paths installed and removed)"
echo "install-deb: 1 passed, 0 failed"
