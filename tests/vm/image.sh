#!/usr/bin/env bash
# A guest of the platform volunteers run, from Debian's archive alone: debootstrap of Debian 12 (bookworm) or
# 13 (trixie) with linux-image-amd64, systemd as PID 1 (pure cgroup v2), dbus-user-session, openssh-server and
# one unprivileged user, "volunteer" (uid 1000), with lingering: logind starts user@1000.service at boot, with
# the cpu controller delegated, and the user has a real session bus, as on a desktop. The runtime libraries of
# nicer's .deb and the tools of the guest checks are installed up front, so a test run installs the .deb from
# a local file without the archive.
#
# Usage:  tests/vm/image.sh SUITE      (bookworm or trixie; prints the image's folder on stdout)
#
# The image is cached by the hash of its recipe (this file and the suite) in ${NICER_VM_CACHE:-/var/cache/
# nicer-vm}/SUITE-HASH: disk.img (ext4, made with mkfs.ext4 -d), vmlinuz, initrd.img, and the ssh key that
# logs in as root and as volunteer. A fresh machine builds it in about 5 minutes. Needs root.
set -euo pipefail

suite=${1:?usage: tests/vm/image.sh bookworm|trixie}
case "$suite" in
bookworm | trixie) ;;
*) echo "vm image: unknown suite '$suite': use bookworm (Debian 12) or trixie (Debian 13)" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "vm image: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
for tool in debootstrap mkfs.ext4 ssh-keygen; do
    command -v "$tool" >/dev/null || { echo "vm image: $tool is missing: run packaging/dev.sh vm, which installs it" >&2; exit 2; }
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${NICER_VM_CACHE:-/var/cache/nicer-vm}
hash=$( (cat "${BASH_SOURCE[0]}"; echo "$suite") | sha256sum | cut -c1-16)
image=$cache/$suite-$hash
if [ -f "$image/ready" ]; then
    echo "$image"
    exit 0
fi

# The runtime of nicer's .deb (its Depends on Debian 12, which the guest checks then find installed) and what
# the checks use: stress-ng for the hogs, Xvfb and a tray host for the tray, BOINC's client for the system
# service, python3 for the checks' arithmetic and their test programs, polkitd as a desktop has it (nicer adds
# no rule: the refusals are polkit's own), power-profiles-daemon for the power-saver rule.
packages=(
    linux-image-amd64 systemd-sysv udev dbus dbus-user-session libpam-systemd openssh-server
    iproute2 procps less ca-certificates
    libqt6core6 libqt6gui6 libqt6widgets6 libqt6dbus6 libqt6charts6 libqt6svg6 qt6-qpa-plugins
    libsystemd0 libnghttp2-14 libpugixml1v5 liburiparser1 libstdc++6 hicolor-icon-theme
    libwayland-client0 libxcb1 libxcb-screensaver0 libxau6
    stress-ng xvfb xauth trayer x11-utils x11-apps fonts-dejavu-core python3 boinc-client polkitd
    power-profiles-daemon
)
case "$suite" in
bookworm) packages+=(libssl3) ;;
trixie) packages+=(libssl3t64) ;;
esac

mirror=$(sed -n 's/^URIs: *\(\S*\/debian\/\?\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
mirror=${mirror:-$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)}
mirror=${mirror:?vm image: no Debian mirror found in the apt sources}

work=$cache/$suite-$hash.building
root=$work/root
cleanup() {
    local status=$? m
    trap - EXIT INT TERM
    for m in dev/pts dev sys proc; do
        if mountpoint -q "$root/$m" 2>/dev/null; then umount -l "$root/$m" || true; fi
    done
    if mountpoint -q "$root" 2>/dev/null; then umount -l "$root" || true; fi
    [ "$status" -eq 0 ] || echo "vm image: FAILED building $suite: see $work/build.log" >&2
    exit "$status"
}
if mountpoint -q "$root" 2>/dev/null; then umount -l "$root"; fi
rm -rf "$work"
mkdir -p "$root"
trap cleanup EXIT
# The tree is made in memory (a tmpfs of its own), where dpkg's sync of every file it unpacks costs nothing;
# mkfs.ext4 -d copies it to the disk image once at the end.
mount -t tmpfs -o size=8G,mode=0755 nicer-vm-root "$root"
trap 'exit 130' INT TERM
log=$work/build.log

echo "vm image: debootstrap $suite from $mirror (log: $log)" >&2
# minbase and the packages above: apt resolves their dependencies in the chroot (debootstrap's own resolver
# is weaker), so debootstrap brings the base and apt the rest.
debootstrap --variant=minbase --include=apt,ca-certificates "$suite" "$root" "$mirror" >>"$log" 2>&1
echo "deb $mirror $suite main" >"$root/etc/apt/sources.list"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --bind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive "$@"; }
# No service starts inside the chroot while packages install.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
echo "vm image: installing ${#packages[@]} packages" >&2
in_root apt-get update -qq >>"$log" 2>&1
in_root apt-get install -y -qq --no-install-recommends "${packages[@]}" >>"$log" 2>&1
rm -f "$root/usr/sbin/policy-rc.d"

# The machine: its disk, name, network (DHCP from qemu's user network), and no timers that would compete
# for the two emulated CPUs during the checks.
echo "/dev/vda / ext4 defaults 0 1" >"$root/etc/fstab"
echo "nicer-guest" >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 nicer-guest\n' >"$root/etc/hosts"
mkdir -p "$root/etc/systemd/network"
printf '[Match]\nName=en* eth*\n\n[Network]\nDHCP=yes\n' >"$root/etc/systemd/network/80-dhcp.network"
in_root systemctl enable systemd-networkd.service >>"$log" 2>&1
echo "nameserver 10.0.2.3" >"$root/etc/resolv.conf"
for unit in apt-daily.timer apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer \
    dpkg-db-backup.timer systemd-tmpfiles-clean.timer; do
    in_root systemctl mask "$unit" >>"$log" 2>&1 || true
done
# Installing boinc-client enabled its system service, as on a volunteer's machine; the checks rely on it
# being enabled (detection) but start it only when they need it.
in_root systemctl enable boinc-client.service >>"$log" 2>&1 || true

# The volunteer: an unprivileged user whose user manager logind starts at boot (linger), and the key that logs
# in as them and as root (root installs the .deb and plays the system administrator).
in_root useradd --create-home --uid 1000 --shell /bin/bash volunteer >>"$log" 2>&1
mkdir -p "$root/var/lib/systemd/linger"
touch "$root/var/lib/systemd/linger/volunteer"
ssh-keygen -q -t ed25519 -N '' -C nicer-vm -f "$work/id_ed25519"
for home in root home/volunteer; do
    install -d -m 0700 "$root/$home/.ssh"
    install -m 0600 "$work/id_ed25519.pub" "$root/$home/.ssh/authorized_keys"
done
in_root chown -R volunteer:volunteer /home/volunteer/.ssh
printf 'PermitRootLogin prohibit-password\nPasswordAuthentication no\nUseDNS no\n' \
    >"$root/etc/ssh/sshd_config.d/nicer-vm.conf"
in_root passwd -d root >>"$log" 2>&1 # a console login for debugging by hand

# The initramfs is made where /proc is mounted (the kernel's package made it above, in the chroot with /proc);
# virtio's block driver and ext4 are modules in Debian's kernel.
kernel=$(basename "$(ls "$root"/boot/vmlinuz-* | sort -V | tail -n1)")
version=${kernel#vmlinuz-}
[ -f "$root/boot/initrd.img-$version" ] || in_root update-initramfs -c -k "$version" >>"$log" 2>&1
cp "$root/boot/vmlinuz-$version" "$work/vmlinuz"
cp "$root/boot/initrd.img-$version" "$work/initrd.img"
in_root apt-get clean >>"$log" 2>&1
rm -f "$root/etc/ssh/ssh_host_"*
in_root ssh-keygen -A >>"$log" 2>&1

for m in dev/pts dev sys proc; do umount "$root/$m"; done
echo "vm image: mkfs.ext4 -d (kernel $version)" >&2
mkfs.ext4 -q -F -L nicer-root -d "$root" "$work/disk.img" 6G >>"$log" 2>&1
umount "$root"
rmdir "$root"
echo "$suite $version $(date -u +%FT%TZ)" >"$work/ready"
rm -rf "$image"
mv "$work" "$image"
echo "$image"
