#!/bin/bash
# By hand, as root: the real BOINC client 8.2 reads the last input a real nicerd publishes in /idle_detect_shmem
# (publish-input-time) and reports the machine in use, or not, accordingly (boinccmd --get_cc_status).
#
# Debian 12's boinc-client is 7.20, which does not read the object (BOINC reads it since 8.2.10): this bootstraps
# Debian forky (its boinc-client is 8.2.15, from Debian's archive) into a chroot that shares this machine's
# /dev/shm, once (about a minute; kept under NICER_VM_CACHE, as the guest's image is), and runs BOINC there as the
# chroot's user boinc, as a system-wide client runs; nicerd runs here under the private user manager
# (tests/harness/user-manager.sh) with an X server (Xvfb) given input through XTest (xdotool). First, the control:
# without the object, the same input leaves BOINC "not in use". `dev.sh test` runs it after ctest, with the
# bootstrap made beside the build (--bootstrap). Forky is Debian's testing suite: when it cannot be bootstrapped
# with boinc-client (the archive changed), this exits 77 and says so, and `dev.sh test` reports the check as not
# run; any other failure fails.
#
# BOINC is told to suspend while the computer is in use (run_if_user_active 0) with an idle time of 6 s
# (idle_time_to_run 0.1), nicerd's away delay is 5 s; the object is the machine's /idle_detect_shmem, so no other
# writer of it may run.
#
#   tests/boinc/idle-shmem-real-client.sh BUILD_DIR
#   tests/boinc/idle-shmem-real-client.sh --bootstrap     only make the chroot
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
root=${NICER_VM_CACHE:-/var/cache/nicer-vm}/forky-boinc-root
data=/var/lib/boinc-nicer-test
port=31499
display=:19
work=$(mktemp -d /tmp/nicer-idle-shmem-XXXXXX)

say() { echo "idle-shmem: $*" >&2; }
die() {
    say "FAIL: $*"
    exit 1
}

if [ ! -x "$root/usr/bin/boinc" ]; then
    say "bootstrapping Debian forky with boinc-client into $root"
    rm -rf "$root.new"
    mkdir -p "$(dirname "$root")"
    if ! debootstrap --variant=minbase --include=boinc-client forky "$root.new" http://deb.debian.org/debian \
        /usr/share/debootstrap/scripts/sid >"$work/debootstrap.log" 2>&1; then
        tail -n 20 "$work/debootstrap.log" >&2
        rm -rf "$root.new" "$work"
        say "NOT RUN: Debian forky with boinc-client cannot be bootstrapped from the archive now (above)"
        exit 77
    fi
    mv "$root.new" "$root"
fi
if [ "${1:-}" = --bootstrap ]; then
    rm -rf "$work"
    exit 0
fi
build=$(realpath "${1:?usage: $0 BUILD_DIR | --bootstrap}")
say "$(chroot "$root" dpkg-query -W boinc-client)"
[ ! -e /dev/shm/idle_detect_shmem ] || die "/dev/shm/idle_detect_shmem exists already: another writer runs"

pids=()
cleanup() {
    set +e
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    chroot "$root" sh -c "cd $data && boinccmd --host localhost:$port --quit" >/dev/null 2>&1
    for _ in $(seq 50); do pgrep -f "boinc --dir $data" >/dev/null || break; sleep 0.1; done
    umount "$root/dev/shm" "$root/proc" 2>/dev/null
    "$repo/tests/harness/user-manager.sh" stop >/dev/null 2>&1
    rm -f /dev/shm/idle_detect_shmem
    rm -rf "$work"
}
trap cleanup EXIT
mount --bind /dev/shm "$root/dev/shm"
mount -t proc proc "$root/proc"

# The private user manager for nicerd, and an X server.
"$repo/tests/harness/user-manager.sh" start >/dev/null
export XDG_RUNTIME_DIR=/run/user/0 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus
Xvfb "$display" -nolisten tcp >"$work/xvfb.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "/tmp/.X11-unix/X${display#:}" ] && break; sleep 0.1; done
input() { DISPLAY=$display xdotool mousemove_relative -- 1 1; }

# BOINC, as a system-wide client: its own user, its own data directory.
chroot "$root" sh -c "rm -rf $data && mkdir -p $data && chown boinc:boinc $data"
cat >"$root$data/global_prefs_override.xml" <<'EOF'
<global_preferences>
   <run_if_user_active>0</run_if_user_active>
   <idle_time_to_run>0.1</idle_time_to_run>
</global_preferences>
EOF
cat >"$root$data/cc_config.xml" <<'EOF'
<cc_config><log_flags><idle_detection_debug>1</idle_detection_debug></log_flags></cc_config>
EOF
chroot "$root" chown boinc:boinc "$data/global_prefs_override.xml" "$data/cc_config.xml"
chroot --userspec=boinc:boinc "$root" sh -c "cd $data && exec boinc --dir $data --gui_rpc_port $port --skip_cpu_benchmarks" \
    >"$work/boinc.log" 2>&1 &
pids+=($!)
cc_status() { chroot "$root" sh -c "cd $data && boinccmd --host localhost:$port --get_cc_status" 2>/dev/null; }
for _ in $(seq 100); do cc_status >/dev/null && break; sleep 0.2; done
cc_status >/dev/null || die "BOINC does not answer its GUI RPC: $(cat "$work/boinc.log")"

# cpu_status_is TEXT TRIES [input]: polls BOINC every half second (with input before each look when asked)
# until its CPU status says TEXT; fails after TRIES looks.
cpu_status_is() {
    for _ in $(seq "$2"); do
        [ "${3:-}" = input ] && input
        sleep 0.5
        cc_status | grep -A1 '^CPU status' | grep -q "$1" && return 0
    done
    return 1
}
legacy_detection() {
    chroot "$root" sh -c "cd $data && boinccmd --host localhost:$port --get_messages" 2>/dev/null |
        grep -q 'legacy idle detection'
}

# The control: BOINC cannot see this X server itself (it runs as another user, in its own root), so input
# alone leaves it "not in use": it looks for the object, falls back to its legacy detection and says so. Its
# first look comes once its start-up is done: within 20 s here, later on a cold CI machine just after the
# chroot's bootstrap (one CI run did not see it in 40 looks), so the bound is 240 looks.
for _ in $(seq 240); do
    input
    legacy_detection && break
    sleep 0.5
done
legacy_detection || die "BOINC did not fall back to its legacy detection without the object"
input
cpu_status_is 'not suspended' 1 || die "BOINC saw the input without nicer: $(cc_status)"
say "without the object: input leaves BOINC not suspended, on its legacy detection"

# nicerd, publishing the X server's idle time.
input
XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config DISPLAY=$display WAYLAND_DISPLAY='' \
    "$build/app/daemon/nicerd" --period 0.5 --away-delay 5 --publish-input-time 1 >"$work/nicerd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -e /dev/shm/idle_detect_shmem ] && break; sleep 0.1; done
[ -e /dev/shm/idle_detect_shmem ] || die "nicerd did not publish /dev/shm/idle_detect_shmem: $(cat "$work/nicerd.log")"
say "$(stat -c '%n: %U, mode %a, %s bytes' /dev/shm/idle_detect_shmem)"

# Input every half second: nicer says here, and BOINC that the computer is in use.
in_use=yes
cpu_status_is 'suspended: computer is in use' 40 input || in_use=""
cc_status | sed -n '1,3p' >&2
[ -n "$in_use" ] || die "BOINC does not say the computer is in use while there is input"
# No input: away after 5 s for nicer, and not in use once BOINC counts 6 s without input.
free=yes
cpu_status_is 'not suspended' 60 || free=""
cc_status | sed -n '1,3p' >&2
[ -n "$free" ] || die "BOINC still says the computer is in use with no input"
say "ok: BOINC 8.2 followed nicer's /idle_detect_shmem (in use with input, not in use without)"
