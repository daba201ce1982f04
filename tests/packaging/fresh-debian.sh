#!/usr/bin/env bash
# The README's test command on a FRESH Debian 12: a debootstrap minbase root (nothing installed by hand), this
# repository's HEAD cloned into it, and `./packaging/dev.sh test` run inside, which installs every package it
# needs itself; then `./packaging/dev.sh build`, which must find nothing to build (the README's second command
# after the first, as a newcomer runs them). It proves dev.sh's list is complete where CI's machine (which
# keeps what earlier runs installed) cannot. By hand, as root, with Debian's archive reachable; about 12
# minutes and 2.5 GB.
#
# Usage:  tests/packaging/fresh-debian.sh [ROOT_DIR]     (default /var/tmp/nicer-fresh; made anew each run)
#
# The root gets proc, /sys and /dev (bind mounts, slave), and tmpfs /run and /tmp: the private systemd user
# manager, Xvfb and the HTTP/2 servers of the tests run in it as on a machine. Everything is unmounted and
# every process left in it is killed at the end, even on failure. The log is ROOT_DIR.log.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${1:-/var/tmp/nicer-fresh}
root=$dir/root
log=$dir.log
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian: needs root (debootstrap, mount, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-debian: install debootstrap (packaging/dev.sh does)" >&2; exit 2; }

processes_inside() {
    local p r
    for p in /proc/[0-9]*; do
        r=$(readlink "$p/root" 2>/dev/null) || continue
        if [[ $r == "$root" || $r == "$root/"* ]]; then echo "${p#/proc/}"; fi
    done
}
cleanup() {
    local status=$? pids i m
    trap - EXIT INT TERM
    for ((i = 0; i < 50; i++)); do
        pids=$(processes_inside | tr '\n' ' ')
        [ -z "${pids// /}" ] && break
        # shellcheck disable=SC2086
        kill "$([ "$i" -lt 25 ] && echo -TERM || echo -KILL)" $pids 2>/dev/null || true
        sleep 0.2
    done
    for m in tmp run dev sys proc; do
        if mountpoint -q "$root/$m"; then umount -R "$root/$m" || umount -R -l "$root/$m"; fi
    done
    if findmnt -rn -o TARGET | grep -qF "$root"; then echo "fresh-debian: WARNING: mounts remain under $root" >&2; fi
    exit "$status"
}

mountpoint -q "$root/proc" 2>/dev/null && { echo "fresh-debian: $root is in use" >&2; exit 2; }
rm -rf "$dir"
mkdir -p "$dir"
# The host's own Debian sources (archive, updates, security), so the versions are the ones CI gets.
mirror=$(sed -n 's/^URIs: *\(\S*\/debian\/\?\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
mirror=${mirror:-$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)}
echo "fresh-debian: debootstrap --variant=minbase bookworm from ${mirror:?no Debian mirror found in the apt sources}" >&2
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$dir/debootstrap.log" 2>&1 ||
    { tail -20 "$dir/debootstrap.log" >&2; exit 1; }
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
    rm -f "$root/etc/apt/sources.list"
else
    grep -h '^deb ' /etc/apt/sources.list | grep -v 'deb-src' >"$root/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
git clone -q "$repo" "$root/src/main"
[ -d "$repo/../shared" ] && cp -a "$repo/../shared" "$root/src/shared"

trap cleanup EXIT
trap 'exit 130' INT TERM
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$root/run"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/tmp"

echo "fresh-debian: running ./packaging/dev.sh test in $root (log: $log)" >&2
status=0
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb \
    bash -c 'cd /src/main && ./packaging/dev.sh test && ./packaging/dev.sh build' >"$log" 2>&1 || status=$?
grep -E '^[0-9]+% tests passed|^dev.sh: installing' "$log" | cut -c1-300 >&2 || true
[ "$status" -eq 0 ] || { echo "fresh-debian: FAILED (status $status): see $log" >&2; exit 1; }
[ "$(tail -n 1 "$log")" = "ninja: no work to do." ] ||
    { echo "fresh-debian: FAILED: the second command rebuilt what the first had built: see $log" >&2; exit 1; }
echo "fresh-debian: 1 passed, 0 failed (dev.sh test on a fresh Debian 12 minbase)"
