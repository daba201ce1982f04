#!/usr/bin/env bash
# nicer where volunteers run it: a Debian guest (tests/vm/image.sh) booted with qemu, systemd as PID 1, pure
# cgroup v2, a user manager that logind starts for the lingering user "volunteer", with a real session bus and
# a real system bus. The release .deb is installed with apt as a volunteer installs it, and every check runs
# over ssh as that unprivileged user (root only plays the administrator: installing, system services,
# drop-ins). Each check's name says what it shows; the last line is "vm: N passed, N failed".
#
# Usage:  tests/vm/run.sh [--suite bookworm|trixie] [--deb FILE] [--tests BUILD_DIR] [--out DIR]
#
#   --suite  Debian 12 (bookworm, the default; what CI runs) or Debian 13 (trixie, by hand)
#   --deb    the package to install (default: the newest build-deb/nicer_*.deb, built by dev.sh package)
#   --tests  a build with tests (default: build/): its systemd integration tests run in the guest too,
#            where FreezeUnit and CPUUsageNSec exist, and no skip is accepted
#   --out    logs, figures, the guest's console and the tray's screenshot (default: build-vm/)
#   --port   use a guest that is already up, its ssh on 127.0.0.1:PORT (developing a check; it is not stopped;
#            NICER_VM_ONLY=REGEX runs only the checks whose names match)
#   --bench  a bench to run instead of the checks, once the .deb is in (bench/mem/guest.py): run as root in
#            the guest with NICER_BENCH_ARGS, its output in OUT/bench.jsonl
#
# The guest runs under TCG (software emulation, -cpu qemu64, 2 CPUs, 2 GiB): nested KVM hangs in early boot on
# these machines. NICER_VM_ACCEL=kvm uses KVM where it works. Timing inside TCG is not a benchmark; shares of
# CPU time and functional checks are. The disk is a snapshot: the cached image never changes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
suite=bookworm
deb=
tests_build=$root/build
out=$root/build-vm
port=
bench=
while [ $# -gt 0 ]; do
    case "$1" in
    --suite) suite=$2; shift 2 ;;
    --deb) deb=$2; shift 2 ;;
    --tests) tests_build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    *) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "vm: needs root (the image is built with debootstrap and chroot)" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "vm: qemu-system-x86_64 is missing: run packaging/dev.sh vm" >&2; exit 2; }
if [ -z "$deb" ]; then
    deb=$(ls -t "$root"/build-deb/nicer_*.deb 2>/dev/null | head -n1 || true)
    [ -n "$deb" ] || { echo "vm: no build-deb/nicer_*.deb: run packaging/dev.sh package first, or pass --deb" >&2; exit 2; }
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/checks.log
: >"$log"
: >"$out/figures.txt"

image=$("$here/image.sh" "$suite")
# Images of earlier recipes of this suite are not used again.
for old in "$(dirname "$image")/$suite"-*; do
    if [ "$old" != "$image" ] && [ -f "$old/ready" ]; then rm -rf "$old"; fi
done
run=$(mktemp -d)
qemu_pid=
stop_guest() {
    trap - EXIT INT TERM
    if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then
        ssh "${ssh_opts[@]}" -O exit root@127.0.0.1 >/dev/null 2>&1 || true
        kill "$qemu_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$qemu_pid" 2>/dev/null || true
    fi
    rm -rf "$run"
}
trap stop_guest EXIT
trap 'exit 130' INT TERM

attached=${port:+1}
port=${port:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
# One ssh connection, shared by every command (ControlMaster): a new handshake costs seconds under TCG. A guest
# that stalls under TCG (once, in CI, for over 30 s just after nicerd started) keeps its connection for 2 min
# and gets a minute for a new handshake, so a slow guest is not taken for a failed check.
common_opts=(-i "$image/id_ed25519" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
    -o LogLevel=ERROR -o BatchMode=yes -o ConnectTimeout=60 -o ServerAliveInterval=10 -o ServerAliveCountMax=12
    -o ControlMaster=auto -o "ControlPath=$run/ssh-%r" -o ControlPersist=3600)
ssh_opts=(-p "$port" "${common_opts[@]}")
scp_opts=(-P "$port" "${common_opts[@]}")
as_root() { ssh "${ssh_opts[@]}" root@127.0.0.1 "$@"; }
as_user() { ssh "${ssh_opts[@]}" volunteer@127.0.0.1 "$@"; }
to_guest() { scp -q "${scp_opts[@]}" "$@"; }
from_guest() { scp -q "${scp_opts[@]}" "$@"; }

accel=${NICER_VM_ACCEL:-tcg}
booted=$(date +%s)
if [ -z "$attached" ]; then
    echo "vm: booting $suite ($image) with $accel; console: $out/console.log" >&2
    # The disk is a snapshot, dropped at the end: its flushes (dpkg's, the journal's) need not reach the host's
    # disk (cache=unsafe). The CPU is the x86-64 baseline Debian builds for (qemu64): -cpu max (5-level
    # paging, AVX2 and the rest, which the guest's kernel and libraries then use) ran slower under emulation
    # (md5sum of 300 MB 3.3 s against 1.5 s, filling 600 MB 4.4 s against 1.9 s, boot 33 s against 27 s).
    qemu-system-x86_64 -accel "$accel" -cpu qemu64 -smp 2 -m 2G -display none -no-reboot \
        -kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
        -append "root=/dev/vda rw console=ttyS0 net.ifnames=0 systemd.show_status=0" \
        -drive "file=$image/disk.img,if=virtio,format=raw,snapshot=on,cache=unsafe" \
        -nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$port-:22" \
        -serial "file:$out/console.log" -pidfile "$run/qemu.pid" -daemonize
    qemu_pid=$(cat "$run/qemu.pid")
fi
up=
for _ in $(seq 120); do
    if as_root true 2>/dev/null; then up=1; break; fi
    [ -n "$attached" ] || kill -0 "$qemu_pid" 2>/dev/null || break
    sleep 5
done
[ -n "$up" ] || { tail -30 "$out/console.log" >&2; echo "vm: the guest did not answer on ssh within 10 minutes" >&2; exit 1; }
as_root 'systemctl is-system-running --wait >/dev/null 2>&1; systemctl is-active user@1000.service' >/dev/null ||
    { as_root 'systemctl --failed; systemctl status user@1000.service' >&2 || true; echo "vm: the volunteer's user manager did not start" >&2; exit 1; }
echo "vm: guest up in $(($(date +%s) - booted)) s: $(as_root 'echo "$(uname -r), systemd $(systemctl --version | head -n1 | cut -d" " -f2), $(stat -fc %T /sys/fs/cgroup)"')" >&2

passed=0
failed=0
failures=()
# check NAME FUNCTION: runs FUNCTION in a subshell; its output goes to the log, and "ok"/"FAILED" to stderr.
check() {
    local name=$1 fn=$2 started status=0
    # NICER_VM_ONLY=REGEX runs only the checks whose names match (developing checks on a guest left up with --port).
    if [ -n "${NICER_VM_ONLY:-}" ] && ! [[ $name =~ $NICER_VM_ONLY ]]; then return 0; fi
    started=$(date +%s)
    echo "=== $name" >>"$log"
    ("$fn") >>"$log" 2>&1 || status=$?
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        echo "vm: ok      $name ($(($(date +%s) - started)) s)" >&2
    else
        failed=$((failed + 1))
        failures+=("$name")
        echo "vm: FAILED  $name ($(($(date +%s) - started)) s):" >&2
        sed -n "/^=== $(printf '%s' "$name" | sed 's/[][\/.*^$]/\\&/g')\$/,\$p" "$log" | tail -n 15 | sed 's/^/    /' >&2
    fi
}
die() { echo "FAIL: $*"; exit 1; }
# poll TENTHS COMMAND...: runs COMMAND in the guest as the volunteer until it succeeds.
poll_user() {
    local tries=$1
    shift
    as_user "for i in \$(seq $tries); do ( $* ) >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1"
}
status_field() { as_user "nicer status --json" | python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }
# Which of nicer's places the checks look at: "root-slice" (the .deb's nicer.slice, where nicerd puts the
# work by default) or "user-slice" (the user manager's nicer.slice, with placement = user-slice in nicerd.conf).
placement=root-slice
root_leaf=/sys/fs/cgroup/nicer.slice/nicer-work@1000.service/work
slice_cgroup() {
    if [ "$placement" = root-slice ]; then
        echo "$root_leaf"
    else
        as_user 'echo /sys/fs/cgroup$(systemctl --user show -P ControlGroup nicer.slice)'
    fi
}

to_guest "$deb" "$here"/guest/{cpu-share,hold-link,test-work}.py root@127.0.0.1:/tmp/
as_root 'for f in cpu-share hold-link test-work; do install -m 0755 /tmp/$f.py /usr/local/bin/$f; done'

# Other users of the machine, each with a user manager that logind keeps (linger): NAME UID.
ensure_user() {
    as_root "id $1 >/dev/null 2>&1 || useradd -m -u $2 $1; loginctl enable-linger $1; systemctl start user@$2.service"
}
# The volunteer's work for a check: nicerd.conf's workload with N instances (test-work ARGS, as the volunteer's
# nicerd runs it), and the demo again afterwards (also when the check fails).
# Both keep the placement the checks are at (nicerd.conf's placement line, use_user_slice).
placement_line() { [ "$placement" = user-slice ] && echo 'placement = user-slice'; true; }
use_test_work() {
    local instances=$1 args
    shift
    args=$(printf ', "%s"' "$@")
    as_user "rm -f ~/.local/state/nicer/workload.conf; mkdir -p ~/.config/nicer
        printf '%s\n' 'instances = $instances' 'workload = [\"/usr/local/bin/test-work\"$args]' $(placement_line | sed "s/.*/'&'/") >~/.config/nicer/nicerd.conf
        systemctl --user restart nicerd.service && nicer status >/dev/null"
}
use_demo_work() {
    local conf='rm -f ~/.config/nicer/nicerd.conf'
    [ "$placement" = user-slice ] && conf='echo "placement = user-slice" >~/.config/nicer/nicerd.conf'
    as_user "$conf; systemctl --user restart nicerd.service; nicer status >/dev/null" || true
}
# as_other NAME UID COMMAND: COMMAND as that user, on their own session bus (nicerd by D-Bus activation).
as_other() {
    as_root "runuser -u $1 -- env XDG_RUNTIME_DIR=/run/user/$2 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$2/bus $3 </dev/null"
}

check_deb_installs() {
    as_root "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /tmp/$(basename "$deb")" ||
        die "apt-get install of the .deb"
    as_root 'dpkg-query -W nicer && test -x /usr/bin/nicerd'
}

check_dbus_activation() {
    as_user 'systemctl --user is-active nicerd.service' && die "nicerd runs before anything asked for it"
    as_user 'nicer status' || die "nicer status did not reach nicerd (D-Bus activation on the session bus)"
    as_user 'systemctl --user is-active nicerd.service' || die "nicerd.service is not active after activation"
    as_user 'test "$(readlink /proc/$(systemctl --user show -P MainPID nicerd.service)/exe)" = /usr/bin/nicerd' ||
        die "the activated nicerd is not /usr/bin/nicerd"
    local actuator where
    actuator=$(status_field "['actuator']")
    where=$(status_field "['placement']")
    echo "actuator: $actuator; placement: $where: $(status_field "['placement_note']")"
    [ "$actuator" = systemd-slice ] || die "nicer status names the actuator '$actuator', not systemd-slice"
    [ "$where" = root-slice ] || die "with the .deb's system part, nicerd chose '$where', not root-slice"
    as_user 'nicer status' | grep -q 'placement    root-slice: protected everywhere' ||
        die "nicer status does not say the work is protected everywhere"
}

# The work in the root idle slice: nicer.slice directly under the root cgroup with cpu.idle 1, the work's
# processes in the leaf of the volunteer's nicer-work@1000.service, running as the volunteer, and the
# leaf's files the volunteer's (nicerd writes them).
check_root_slice() {
    as_root 'systemctl show -P ControlGroup nicer.slice; cat /sys/fs/cgroup/nicer.slice/cpu.idle
        systemctl show -P ActiveState,User,ControlGroup nicer-work@1000.service'
    [ "$(as_user 'systemctl show -P ControlGroup nicer.slice')" = /nicer.slice ] ||
        die "nicer.slice is not directly under the root cgroup"
    [ "$(as_user 'cat /sys/fs/cgroup/nicer.slice/cpu.idle')" = 1 ] || die "cpu.idle of nicer.slice is not 1"
    poll_user 300 "test -n \"\$(cat $root_leaf/*/cgroup.procs)\"" || die "no work runs in $root_leaf"
    local owners
    owners=$(as_user "for p in \$(cat $root_leaf/*/cgroup.procs); do ps -o user:20=,comm= -p \$p; done | sort | uniq -c")
    echo "the work's processes: $owners"
    echo "$owners" | grep -q md5sum || die "the demo's md5sum is not in the leaf"
    echo "$owners" | awk '$2 != "volunteer" { bad = 1 } END { exit bad }' || die "a process of the work is not the volunteer's"
    as_user "test -O $root_leaf/cpu.max && test -w $root_leaf/cgroup.freeze" || die "the leaf's files are not the volunteer's"
    as_user 'grep -q nicer.slice /proc/$(systemctl --user show -P MainPID nicerd.service)/cgroup' &&
        die "nicerd itself runs in the root idle slice"
    true
}

# A hog started in the volunteer's login session (an ssh session is a session-N.scope under user-1000.slice,
# outside the user manager, as a Cinnamon, XFCE or MATE desktop is): its share and the work's over 10 s, after
# 3 s to settle. WORK_CGROUP (under /sys/fs/cgroup) is measured.
session_hog_shares() {
    as_user 'nohup stress-ng --cpu 0 --timeout 60s >/dev/null 2>&1 & echo $! >/tmp/session-hog.pid'
    local scope
    scope=$(as_user 'sed -n "s/^0:://p" /proc/$(cat /tmp/session-hog.pid)/cgroup')
    case "$scope" in */session-*.scope) ;; *) as_user 'kill $(cat /tmp/session-hog.pid)'; die "the hog is not in a login session's scope: $scope" ;; esac
    # 2 s for the hog's workers to start and the kernel to settle, then the measured window.
    as_user "sleep 2; cpu-share 10 $1 $scope"
    as_user 'kill $(cat /tmp/session-hog.pid); pkill -u volunteer -x stress-ng' || true
}
check_session_hog_root_slice() {
    local shares
    shares=$(session_hog_shares "${root_leaf#/sys/fs/cgroup}") || die "measuring the shares"
    echo "$shares" | sed 's/^/root idle slice beside a login-session hog (10 s): work, hog /' | tee -a "$out/figures.txt"
    python3 -c "import sys; w, h = map(float, '$shares'.split()); sys.exit(0 if w <= 0.02 and h >= 0.9 else 1)" ||
        die "in the root idle slice the work kept more than 0.02 beside a hog in the login session: work, hog $shares"
}

# Nothing is granted, tried from the other side: no user can start, stop, restart, change or signal any
# instance through the system manager (their own included: only their socket starts it), nor start a transient
# unit in the idle slice; another user cannot reach the volunteer's socket; root's own socket is refused by the
# host, which never runs the work as root.
check_refusals() {
    as_root 'id intruder >/dev/null 2>&1 || useradd -m intruder'
    local refused=0 tried=0
    try_refused() { # WHO COMMAND...: the command must fail, refused (not failing for another reason)
        local who=$1 said
        shift
        tried=$((tried + 1))
        if said=$(as_root "runuser -u $who -- $* 2>&1 </dev/null"); then
            echo "NOT REFUSED: $who: $*: $said"
        elif ! grep -qiE 'authentication required|access denied|permission denied' <<<"$said"; then
            echo "FAILED, BUT NOT REFUSED: $who: $*: $said"
        else
            echo "refused: $who: $*: $(echo "$said" | head -n1)"
            refused=$((refused + 1))
        fi
    }
    try_refused intruder systemctl start nicer-work@1000.service
    try_refused intruder systemctl stop nicer-work@1000.service
    try_refused intruder systemctl restart nicer-work@1000.service
    try_refused intruder systemctl set-property --runtime nicer-work@1000.service CPUQuota=100%
    try_refused intruder systemctl kill nicer-work@1000.service
    try_refused intruder systemctl stop nicer-work@1000.socket
    try_refused volunteer systemctl start nicer-work@0.service
    try_refused volunteer systemctl start nicer-work@1000.service
    try_refused volunteer systemctl stop nicer-work@1000.service
    try_refused volunteer systemctl restart nicer-work@1000.service
    try_refused volunteer systemctl start nicer-work@0.socket
    try_refused volunteer systemctl set-property --runtime nicer-work@1000.service CPUQuota=100%
    try_refused volunteer systemctl set-property --runtime nicer.slice CPUWeight=100
    try_refused volunteer systemd-run --slice=nicer.slice --unit=nicer-work@1000 sleep 60
    try_refused volunteer systemd-run --unit=nicer-work@1000-x -p User=root sleep 60
    try_refused volunteer systemctl start nicer.slice
    # Without the template on disk, a transient unit of an instance's name is refused too (systemd 257 asks
    # polkit with the name before the unit exists).
    as_root 'mv /usr/lib/systemd/system/nicer-work@.service /root/ && systemctl daemon-reload' || die "moving the template away"
    try_refused volunteer systemd-run --unit=nicer-work@1000-t -p User=root sleep 60
    try_refused volunteer systemd-run --unit=nicer-work@1001 sleep 60
    as_root 'mv /root/nicer-work@.service /usr/lib/systemd/system/ && systemctl daemon-reload' || die "putting the template back"
    # The socket is the volunteer's alone: another user cannot connect to it.
    try_refused intruder python3 -c "'import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(\"/run/nicer/work/1000.socket\")'"
    as_root 'systemctl is-active nicer-work@1000.service' || die "the volunteer's instance stopped during the refusals"
    echo "$refused of $tried refused"
    # Root's manager has its socket too (the drop-in wants it for every manager); the host refuses to run.
    local said
    said=$(as_root 'systemctl start user@0.service && python3 -c "
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(\"/run/nicer/work/0.socket\")
s.settimeout(30)
print(s.recv(4096).decode().replace(chr(0), \" | \"))"; systemctl stop user@0.service') || die "reaching root's socket"
    echo "root's own host answered: $said"
    [[ $said == "refused | the volunteer work never runs as root"* ]] || die "root's host did not refuse: $said"
    [ "$refused" -eq "$tried" ] || die "$((tried - refused)) of $tried calls that must be refused went through"
}

# The host lives no longer than its user's manager, whoever holds its link: a program of the user's own,
# outside the user's manager and session (here started from root's session, as any process that escaped
# them), connects to the socket, has a `sleep` started in the idle slice and holds the link. When the manager
# ends, by `loginctl terminate-user` or as logind stops it at logout without linger, the host and the sleep end
# within seconds (BindsTo=user@UID.service).
check_host_bound_to_manager() {
    ensure_user holder 1300 || die "adding the user holder"
    local how said
    for how in "loginctl terminate-user holder" "systemctl stop user@1300.service"; do
        as_root 'systemctl start user@1300.service' || die "starting holder's manager"
        as_root 'nohup runuser -u holder -- hold-link 1300 >/tmp/hold-link.log 2>&1 & echo $! >/tmp/hold-link.pid'
        poll_user 300 "grep -q started /tmp/hold-link.log" || { as_root 'cat /tmp/hold-link.log'; die "the holder's host did not start its sleep"; }
        as_root 'cat /tmp/hold-link.log; systemctl show -P ActiveState,ControlGroup nicer-work@1300.service'
        said=$(as_root "$how; start=\$(date +%s%N)
            while systemctl is-active -q nicer-work@1300.service || pgrep -u holder -x sleep >/dev/null; do
                [ \$(( (\$(date +%s%N) - start) / 1000000 )) -lt 10000 ] || exit 1; sleep 0.05; done
            echo \$(( (\$(date +%s%N) - start) / 1000000 ))") || {
            as_root 'pkill -f hold-link; systemctl status nicer-work@1300.service' || true
            die "after '$how' the holder's host or its sleep still ran 10 s later"
        }
        echo "after '$how': the host and its work were gone in $said ms, the link still held by $(as_root 'cat /tmp/hold-link.pid')" |
            tee -a "$out/figures.txt"
        as_root 'pkill -f hold-link' || true
    done
}

# The work dies first: every process of the work's unit has the largest oom_score_adj (1000), above every other
# process of the volunteer (the user manager's services, the login session); and when a program of the
# session needs more memory than is left, the kernel's OOM killer takes the work, never the program or the
# session. The work: two instances holding 350 MiB each; the program: 1300 MiB, in the guest's 2 GiB (with
# 4 GiB, emulation took 2.5 to 3 minutes to fill and reclaim twice these sizes; this takes about 1).
check_oom_kills_work_first() {
    local adj
    adj=$(as_user "for p in \$(pgrep -u volunteer); do echo \"\$(cat /proc/\$p/oom_score_adj 2>/dev/null) \$(sed -n 's/^0:://p' /proc/\$p/cgroup 2>/dev/null) \$(cat /proc/\$p/comm 2>/dev/null)\"; done")
    echo "$adj" | sort -n | uniq -c | sort -k2 -n | tail -n 12
    # The work's unit holds the host too, which the work ends with: it is killed first as well.
    echo "$adj" | awk -v unit=/nicer.slice/nicer-work@1000.service/ '$1 == "" { next }
        index($2, unit) == 1 { work++; if ($1 != 1000) bad = bad " work:" $3 "=" $1; next }
        { others++; if ($1 >= 1000) bad = bad " other:" $3 "=" $1 }
        END { print work " processes of the work, " others " others"; if (bad != "" || work == 0) { print "wrong:" bad; exit 1 } }' ||
        die "the work's oom_score_adj is not above every other process of the volunteer"
    # The fence alone (memory-share 1): with the profile's share the kernel reclaims the work's pages before
    # memory runs out, and the OOM killer may never be needed; this check is of the OOM killer's choice.
    # The memory rule off too: it would end an instance before the kernel had to (check_memory_rule_no_swap).
    as_user 'nicer set memory-share=1 memory-stall=0' || die "nicer set memory-share=1 memory-stall=0"
    use_test_work 2 memory 350 || { use_demo_work; as_user 'nicer set memory-share=1 memory-stall=0.01'; die "starting the memory-holding work"; }
    poll_user 1200 "test \$(cat ${root_leaf}/memory.current) -gt \$((650 << 20))" ||
        { use_demo_work; as_user 'nicer set memory-share=1 memory-stall=0.01'; die "the work did not come to hold 650 MiB: $(as_user "cat $root_leaf/memory.current")"; }
    local since hog kills
    since=$(as_root 'date "+%F %T"')
    hog=$(as_user 'python3 -c "import time; b = b\"h\" * (1300 << 20); time.sleep(1); print(\"the program got its memory\")"; echo "exit $?"')
    kills=$(as_root "journalctl -k -o cat --since '$since' | grep -E '^oom-kill:|Killed process' || true")
    use_demo_work
    as_user 'nicer set memory-share=1 memory-stall=0.01' || die "nicer set memory-share=1 memory-stall=0.01"
    echo "the program: $hog"
    echo "the kernel: $kills"
    echo "$kills" | grep -q '^oom-kill:' || die "the kernel killed nothing: the check proved nothing"
    echo "$hog" | grep -q '^exit 0$' || die "the session's program was killed or failed: $hog"
    # The instances share the leaf's memory cgroup (the leaf enables no controller for its children). The
    # host sits beside the leaf in the work's unit with the same oom_score_adj: when the kernel reclaims
    # slowly after the instances' kills, it may be taken too, and nicerd starts a new one. Both are the work.
    local unit=${root_leaf#/sys/fs/cgroup}
    unit=${unit%/work}
    if echo "$kills" | grep '^oom-kill:' | grep -v "task_memcg=${unit}/\(work\|host\)[/,]"; then
        die "the OOM killer took something other than the work"
    fi
    echo "OOM: the session's program got 1300 MiB; the kernel killed $(echo "$kills" | grep -o '^oom-kill:.*pid=[0-9]*' | sort -u | wc -l) process(es), all of the work" |
        tee -a "$out/figures.txt"
}

# The memory rule on the real kernel's PSI (pure cgroup v2, 2 GiB): the work holds 2 x 300 MiB, and a
# program of the volunteer's (a user service, in the app.slice where nicerd may arm a PSI trigger) takes memory
# up to more than it has available beside the work, so that it cannot get it unless the work lets memory go:
# 20 MiB every 0.25 s up to 200 MiB short of that, then 10 MiB every 0.5 s.
# (A fixed 1200 MiB fitted beside the work on one CI run, from the page cache, and the rule rightly did nothing.)
#
# memory_rule_case swap: the user slice, with a 1 GiB swap file, in a memory-limited cgroup: root gives the
# volunteer's user manager a MemoryMax= of what it holds with the work in, plus 500 MiB, as an administrator
# of a shared machine would, and the program takes 300 MiB over that. The limit is what the work and the
# program share, and nicerd counts room within it (its note says so). The program reclaims within the limit
# itself and waits on it (PSI "some" of its own cgroup), a trigger wakes nicerd, and the rule lowers the
# work's memory.high and asks memory.reclaim: the work's pages go to swap (it may use half of it), the program
# gets its memory with no OOM kill, and once it ended memory.high rises again. The period is 10 s, so that the
# trigger, not a period's reading, is what acts first (at 1 s either may, and the check could not tell that a
# trigger woke the rule). A trigger's wake-up is logged when its reading presses the rule: over the stall
# allowed, or under 5% of the limit available (the stall since the last reading, up to a period ago, may be
# under what is allowed while the window's was over half of it: CI saw the rule act on such a wake-up, unlogged). Without the limit, against the machine's whole memory, the kernel swapped the idle
# login session's pages and the stall landed there, in a scope the volunteer may not arm, or nowhere: the
# check could not make a trigger certain.
#
# memory_rule_case none: the root idle slice, no swap, the machine's whole memory, 100 MiB over MemAvailable
# (read with the work in). The kernel shows no stall before its cliff here: "some" stayed
# 0 while MemAvailable fell to 27 MiB, then the guest hung 14 s and the OOM killer took an instance, before any
# reading. So the rule also counts under 5% of the machine available as a stall where nothing can swap: it
# freezes the work and ends an instance (a frozen task keeps its pages), the program gets its memory, and once
# it ended the instance starts again and memory.high rises. The OOM killer may still take an instance of the
# work in a race (it did in one of six runs before the 5% rule), never anything else.
memory_rule_case() {
    local swap=$1 cg high_before high_during since kills woke over period touch
    if [ "$swap" = swap ]; then over=300 period=10; else over=100 period=1; fi
    restore() {
        use_demo_work
        as_user 'nicer set memory-share=1 resume-delay=60 period=1; systemctl --user stop nicer-fg.service' || true
        [ "$swap" = none ] ||
            as_root 'systemctl set-property --runtime user@1000.service MemoryMax=infinity; swapoff /swapfile; rm -f /swapfile' || true
    }
    if [ "$swap" = swap ]; then
        as_root 'fallocate -l 1G /swapfile && chmod 600 /swapfile && mkswap -q /swapfile && swapon /swapfile' ||
            die "turning on a swap file"
    fi
    as_user "nicer set memory-share=1 resume-delay=3 memory-stall=0.01 period=$period" || { restore; die "nicer set"; }
    # With swap the work uses its memory, touching every page each second, as a task working on its data
    # does: pages left untouched went to swap at no stall to anyone, the rule's help or not.
    if [ "$swap" = swap ]; then touch=1; else touch=; fi
    use_test_work 2 memory 300 $touch || { restore; die "starting the memory-holding work"; }
    cg=$(slice_cgroup) # once nicerd runs in the placement: the user manager's nicer.slice exists only then
    [ "$cg" != /sys/fs/cgroup ] || { restore; die "the work's slice has no cgroup"; }
    poll_user 1200 "test \$(cat $cg/memory.current) -gt \$((550 << 20))" ||
        { restore; die "the work did not come to hold 550 MiB: $(as_user "cat $cg/memory.current")"; }
    high_before=$(as_user "cat $cg/memory.high")
    local target with="without swap"
    if [ "$swap" = swap ]; then
        local manager=/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service held
        held=$(as_root "echo \$((\$(cat $manager/memory.current) >> 20))")
        as_root "systemctl set-property --runtime user@1000.service MemoryMax=$((held + 500))M" ||
            { restore; die "limiting the user manager's memory"; }
        target=$((500 + over)) with="with swap, in the user manager's MemoryMax= of $((held + 500)) MiB"
        poll_user 200 "nicer status | grep -q 'share .*user@1000.service.s limit'" ||
            { as_user 'nicer status'; restore; die "nicerd does not count room within the user manager's limit"; }
    else
        target=$(as_user "awk '/^MemAvailable:/ { print int(\$2 / 1024 / 10) * 10 + $over }' /proc/meminfo")
    fi
    echo "the program will take $target MiB, $over MiB more than is available beside the work ($with)"
    since=$(as_root 'date "+%F %T"')
    as_user "systemd-run --user --quiet --unit=nicer-fg --collect python3 -c 'import time
chunks, got = [], 0
while got < $target:
    fast = got < $target - 300
    chunks.append(bytearray(b\"f\") * ((20 if fast else 10) << 20))
    got += 20 if fast else 10
    time.sleep(0.25 if fast else 0.5)
print(\"the program got\", got, \"MiB\", flush=True)
time.sleep(2)'" || { restore; die "starting the program"; }
    poll_user 600 "nicer status --json | grep -q '\"memory_hold\": \"[a-z]'" ||
        { as_user 'nicer status'; restore; die "the memory rule did not hold the work"; }
    # MemoryHigh is written without waiting for the manager's answer (in the user slice the manager shares
    # the memory under pressure): in force a moment after the rule says it holds.
    poll_user 600 "h=\$(cat $cg/memory.high); test \"\$h\" != max && { test \"$high_before\" = max || test \"\$h\" -lt $high_before; }" ||
        { restore; die "the work's memory.high did not come down: $high_before, then $(as_user "cat $cg/memory.high")"; }
    high_during=$(as_user "cat $cg/memory.high")
    as_user 'nicer status' | sed -n '/memory rule/,+2p'
    if [ "$swap" = none ]; then
        poll_user 600 "nicer status --json | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)[\"instances_stopped\"] >= 1 else 1)'" ||
            { as_user 'nicer status'; restore; die "the rule ended no instance of the work, with no swap to take its memory"; }
    fi
    poll_user 900 "! systemctl --user -q is-active nicer-fg.service" || { restore; die "the program did not end"; }
    as_root "journalctl -o cat --since '$since' _UID=1000 _SYSTEMD_USER_UNIT=nicer-fg.service" | grep -q "the program got $target MiB" ||
        { restore; die "the program did not get its memory"; }
    local journal
    journal=$(as_root "journalctl -o cat --since '$since' _UID=1000 _SYSTEMD_USER_UNIT=nicerd.service")
    woke=$(echo "$journal" | grep -c 'a PSI trigger woke the memory rule' || true)
    if [ "$swap" = swap ] && [ "$woke" -eq 0 ]; then
        echo "$journal" | grep -i 'memory' | tail -n 20
        restore; die "no PSI trigger woke the memory rule"
    fi
    kills=$(as_root "journalctl -k -o cat --since '$since' | grep -E '^oom-kill:' || true")
    local unit=${cg#/sys/fs/cgroup}
    unit=${unit%/work} # the root idle slice: the work's unit, its host included
    if echo "$kills" | grep '^oom-kill:' | grep -v "task_memcg=${unit}/"; then
        restore; die "the OOM killer took something other than the work: $kills"
    fi
    [ "$swap" = none ] || [ -z "$kills" ] || { restore; die "the kernel had to kill, with swap: $kills"; }
    local reclaims
    reclaims=$(echo "$journal" | sed -n 's/.*memory.reclaim of .* took \([0-9.]*\) ms/\1/p' | sort -n | tail -n1)
    # Given back: the work thaws after resume-delay and a stopped instance starts again, memory.high rises.
    poll_user 1500 "nicer status --json | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)[\"instances_stopped\"] == 0 else 1)'" ||
        { as_user 'nicer status'; restore; die "the stopped instance did not start again"; }
    poll_user 1500 "h=\$(cat $cg/memory.high); test \"\$h\" = max || test \"\$h\" -gt $high_during" ||
        { restore; die "memory.high did not rise again from $high_during"; }
    echo "memory rule, $with: memory.high $high_before, then $high_during; the program got $target MiB ($over more than was available); $woke wake-ups by a PSI trigger; the kernel's OOM kills (of the work): $(echo "$kills" | grep -c '^oom-kill:'); the longest memory.reclaim ${reclaims:-(none)} ms; the work given back" |
        tee -a "$out/figures.txt"
    restore
}
check_memory_rule_no_swap() { memory_rule_case none; }
check_memory_rule_swap() { memory_rule_case swap; }

# One user's work cannot take another's tasks: the volunteer's work makes threads until its unit's TasksMax
# stops it, and a second user's work still starts in the shared slice.
check_tasks_bounded_per_user() {
    ensure_user second 1200 || die "adding the user second"
    use_test_work 1 threads || { use_demo_work; die "starting the thread-making work"; }
    local unit=/sys/fs/cgroup/nicer.slice/nicer-work@1000.service max current
    max=$(as_user "cat $unit/pids.max")
    poll_user 1800 "test \$(cat $unit/pids.current) -ge \$(( $max - 2 ))" ||
        { use_demo_work; die "the volunteer's work did not reach its TasksMax $max: $(as_user "cat $unit/pids.current")"; }
    current=$(as_user "cat $unit/pids.current")
    as_other second 1200 'nicer status' >/dev/null || { use_demo_work; die "the second user's nicerd did not start"; }
    poll_user 600 "test -n \"\$(cat /sys/fs/cgroup/nicer.slice/nicer-work@1200.service/work/*/cgroup.procs 2>/dev/null)\""
    local started=$?
    local second_where
    second_where=$(as_other second 1200 'nicer status --json' | python3 -c "import json, sys; print(json.load(sys.stdin)['placement'])")
    as_other second 1200 'systemctl --user stop nicerd.service' || true
    use_demo_work
    echo "the volunteer's work held $current tasks (its TasksMax $max; the slice: $(as_user 'cat /sys/fs/cgroup/nicer.slice/pids.max')); the second user's work: $second_where" |
        tee -a "$out/figures.txt"
    [ "$started" -eq 0 ] && [ "$second_where" = root-slice ] ||
        die "the second user's work did not start in the idle slice beside the volunteer's ($second_where)"
}

# The link: kill -9 of nicerd closes its end, and the host stops the work. Measured until the leaf is empty.
check_kill9_root_slice() {
    poll_user 300 "test -n \"\$(cat $root_leaf/*/cgroup.procs)\"" || die "no work runs in the root idle slice"
    local pid said
    pid=$(as_user 'systemctl --user show -P MainPID nicerd.service')
    said=$(as_user "kill -9 $pid; start=\$(date +%s%N); while [ -n \"\$(cat $root_leaf/*/cgroup.procs 2>/dev/null)\" ]; do
        [ \$(( (\$(date +%s%N) - start) / 1000000 )) -lt 10000 ] || exit 1; sleep 0.02; done
        echo \$(( (\$(date +%s%N) - start) / 1000000 ))") || die "processes of the work were still running 10 s after kill -9 of nicerd"
    echo "root idle slice: the work was gone ${said} ms after kill -9 of nicerd" | tee -a "$out/figures.txt"
    poll_user 100 '! systemctl is-active -q nicer-work@1000.service' || die "nicer-work@1000.service still runs without nicerd"
    as_user 'systemctl --user reset-failed nicerd.service; systemctl --user start nicerd.service'
}

# The other ends of the link: a restart of the user manager (as at logout) ends nicerd and so the work; a work
# host that crashes takes its work along, and nicerd starts the unit again after the supervisor's backoff.
check_manager_restart_root_slice() {
    as_user 'nicer status >/dev/null' || die "nicerd does not answer"
    poll_user 300 "test -n \"\$(cat $root_leaf/*/cgroup.procs)\"" || die "no work runs in the root idle slice"
    local started
    started=$(date +%s%N)
    restart_user_manager || die "restarting the user manager"
    poll_user 100 "test -z \"\$(cat $root_leaf/*/cgroup.procs 2>/dev/null)\"" ||
        die "the work still ran 10 s after the user manager restarted"
    echo "root idle slice: the work was gone within $(( ($(date +%s%N) - started) / 1000000 )) ms of the user manager's restart (its stop included)" |
        tee -a "$out/figures.txt"
}
check_host_crash_root_slice() {
    as_user 'nicer status >/dev/null' || die "nicerd does not answer"
    poll_user 300 "test -n \"\$(cat $root_leaf/*/cgroup.procs)\"" || die "no work runs in the root idle slice"
    local host work
    host=$(as_user 'systemctl show -P MainPID nicer-work@1000.service')
    work=$(as_user "cat $root_leaf/*/cgroup.procs | tr '\n' ' '")
    as_user "kill -9 $host"
    poll_user 100 "! kill -0 $work 2>/dev/null && for p in $work; do ! kill -0 \$p 2>/dev/null || exit 1; done" ||
        die "the work ($work) still ran 10 s after its host was killed"
    poll_user 600 "test -n \"\$(cat $root_leaf/*/cgroup.procs 2>/dev/null)\" && test \$(systemctl show -P MainPID nicer-work@1000.service) != $host" ||
        die "nicerd did not start a new host and work within 60 s"
    echo "host $host killed: its work ($work) ended with it; a new host $(as_user 'systemctl show -P MainPID nicer-work@1000.service') runs $(as_user "cat $root_leaf/*/cgroup.procs | tr '\n' ' '")"
    [ "$(status_field "['placement']")" = root-slice ] || die "nicerd left the root idle slice"
}

# A quick restart of nicerd, its old host still stopping the work: the new nicerd's connection waits in the
# socket's queue until the old host ended, and the work stays in the root idle slice.
check_quick_restart_root_slice() {
    poll_user 300 "test -n \"\$(cat $root_leaf/*/cgroup.procs 2>/dev/null)\"" || die "no work runs in the root idle slice"
    local host
    host=$(as_user 'systemctl show -P MainPID nicer-work@1000.service')
    as_user 'systemctl --user restart nicerd.service && nicer status >/dev/null' || die "nicerd did not come back"
    echo "placement after the restart: $(status_field "['placement']"): $(status_field "['placement_note']")"
    [ "$(status_field "['placement']")" = root-slice ] || die "a quick restart left the root idle slice"
    poll_user 300 "test -n \"\$(cat $root_leaf/*/cgroup.procs 2>/dev/null)\"" || die "no work runs in the root idle slice after the restart"
    echo "host $host before, $(as_user 'systemctl show -P MainPID nicer-work@1000.service') after the restart"
}

# BOINC's client as the work in the root idle slice: nicerd reaches it over its GUI RPC as in the user slice.
check_boinc_root_slice() {
    as_user 'nicer workload boinc' || die "nicer workload boinc"
    poll_user 600 "pgrep -u volunteer -x boinc >/dev/null && grep -qx \"\$(pgrep -u volunteer -x boinc)\" $root_leaf/*/cgroup.procs" ||
        die "the BOINC client does not run in the root idle slice"
    poll_user 600 'nicer boinc --json | python3 -c "import json, sys; sys.exit(0 if json.load(sys.stdin)[\"state\"] in (\"running\", \"suspended\", \"held\") else 1)"'
    local answered=$?
    as_user 'nicer boinc --json' | head -c 600; echo
    as_user 'nicer workload demo' || die "nicer workload demo"
    [ "$answered" -eq 0 ] || die "nicerd did not reach the BOINC client in the root idle slice over its GUI RPC"
}

# Without the volunteer's socket (stopped by root, as on a system where the package was just installed and
# the manager did not get it) nicerd runs the work in the user slice, and says why and what to do.
check_without_system_part() {
    as_user 'systemctl --user stop nicerd.service'
    as_root 'systemctl stop nicer-work@1000.socket'
    as_user 'nicer status >/dev/null'
    local where note
    where=$(status_field "['placement']")
    note=$(status_field "['placement_note']")
    as_user 'systemctl --user stop nicerd.service'
    as_root 'systemctl start nicer-work@1000.socket'
    echo "placement: $where: $note"
    [ "$where" = user-slice ] || die "without the socket nicerd chose '$where'"
    [[ $note == *"/run/nicer/work/1000.socket is not there"* ]] || die "the note does not say the socket is missing"
    [[ $note == *"sudo systemctl start nicer-work@1000.socket"* ]] || die "the note does not say what to do"
    [[ $note == *"Installing nicer's .deb protects"* ]] || die "the note does not say what protects everything"
}

# The rest runs in the user manager's slice, as on a machine without the .deb's system part.
use_user_slice() {
    as_user 'systemctl --user stop nicerd.service; mkdir -p ~/.config/nicer && echo "placement = user-slice" >~/.config/nicer/nicerd.conf'
    placement=user-slice
    as_user 'nicer status >/dev/null' || die "nicerd does not start with placement = user-slice"
    [ "$(status_field "['placement']")" = user-slice ] || die "placement = user-slice was not taken"
    as_user 'nicer status' | grep -q 'placement    user-slice: protected inside your user session only' ||
        die "nicer status does not say the work is protected inside the user session only"
}

check_cpu_idle() {
    local cg
    cg=$(slice_cgroup)
    as_user "cat $cg/cpu.idle $cg/cpu.weight"
    [ "$(as_user "cat $cg/cpu.idle")" = 1 ] || die "cpu.idle of nicer.slice is not 1 (CPUWeight=idle)"
}

# cpu.max holds the quota nicerd applied, in windows as long as the period (1 s by default). The quota moves
# every period, so cpu.max is read first and then nicerd's history: it must be one of the last three quotas
# nicerd published (a tick may fall between the two reads).
check_cpu_max_follows_quota() {
    local cg agree=0 i
    cg=$(slice_cgroup)
    for i in $(seq 8); do
        as_user "read -r max window <$cg/cpu.max; echo \"\$max \$window \$(nproc)\"
            busctl --user --json=short call org.nicer.Daemon /org/nicer/Daemon org.nicer.Daemon1 GetHistory" |
            python3 -c '
import json, sys
max_, window, cpus = sys.stdin.readline().split()
quotas = [s[5] for s in json.loads(sys.stdin.read())["data"][0][-3:]]
applied = max_ != "max" and int(max_) / int(window) / int(cpus)
print("cpu.max", max_, window, "=", applied, "of the machine; last quotas", [round(q, 3) for q in quotas])
if window != "1000000":
    sys.exit(f"cpu.max window is {window} us, not the 1 s that the 1 s period asks for")
sys.exit(0 if applied is not False and any(abs(applied - q) <= 0.01 for q in quotas) else 1)' &&
            agree=$((agree + 1))
        sleep 1
    done
    echo "$agree of 8 samples agree"
    [ "$agree" -ge 6 ] || die "cpu.max held one of nicerd's last quotas in $agree of 8 samples"
}

# On v2 the window count is cpu.stat's nr_periods, the file nicerd aligns its ticks to: it counts one
# window a second while the work runs under its quota.
check_bandwidth_windows_counted() {
    local cg
    cg=$(slice_cgroup)
    as_user "grep -E 'nr_periods|nr_throttled' $cg/cpu.stat; sleep 5; grep -E 'nr_periods|nr_throttled' $cg/cpu.stat" |
        tee -a /dev/stderr | awk '$1 == "nr_periods" { n[++i] = $2 } END { d = n[2] - n[1]; print "windows in 5 s:", d; exit !(d >= 3 && d <= 7) }' ||
        die "cpu.stat's nr_periods did not count about one window a second"
}

check_pause_freezes() {
    local cg
    cg=$(slice_cgroup)
    as_user 'nicer pause' || die "nicer pause"
    poll_user 100 "grep -qx 'frozen 1' $cg/cgroup.events" || die "cgroup.events does not say frozen 1 after nicer pause"
    local share
    share=$(as_user "cpu-share 3 ${cg#/sys/fs/cgroup}")
    echo "work's share while paused: $share"
    python3 -c "import sys; sys.exit(0 if $share < 0.01 else 1)" || die "the paused work used $share of the machine"
    as_user 'nicer resume' || die "nicer resume"
    poll_user 100 "grep -qx 'frozen 0' $cg/cgroup.events" || die "cgroup.events does not say frozen 0 after nicer resume"
}

# The profile's instance count (max-instances): the demo's second instance frozen in its own cgroup (the root
# idle slice: its leaf's cgroup.freeze, written by nicerd; the user slice: FreezeUnit), the first running, and
# both again with max-instances=0.
check_max_instances() {
    local cg
    cg=$(slice_cgroup)
    as_user 'nicer set max-instances=1' || die "nicer set max-instances=1"
    poll_user 100 "grep -qx 'frozen 1' $cg/nicer-work-2.service/cgroup.events" || { as_user 'nicer status' || true; die "the second instance is not frozen"; }
    as_user "grep -qx 'frozen 0' $cg/nicer-work-1.service/cgroup.events" || die "the first instance is frozen too"
    as_user 'nicer status' | grep -F '2 instances (1 running while' || die "nicer status does not say one instance runs"
    as_user 'nicer set max-instances=0' || die "nicer set max-instances=0"
    poll_user 100 "grep -qx 'frozen 0' $cg/nicer-work-2.service/cgroup.events" || die "the second instance is not thawed"
}

# The real power-profiles-daemon of the system (its placeholder driver, in a guest without a platform profile):
# root switches to power-saver, as the desktop's power menu does, and the volunteer's nicerd pauses the work.
check_power_saver_pauses() {
    local cg
    cg=$(slice_cgroup)
    as_root 'systemctl is-active power-profiles-daemon' || die "power-profiles-daemon does not run"
    as_user 'nicer set resume-delay=1' || die "nicer set resume-delay=1"
    as_root 'busctl set-property net.hadess.PowerProfiles /net/hadess/PowerProfiles net.hadess.PowerProfiles ActiveProfile s power-saver' ||
        die "power-profiles-daemon refused power-saver"
    poll_user 100 "nicer status --json | grep -q '\"held_by\": *\"power-saver\"'" || { as_user 'nicer status' || true; die "nicer status does not say the power-saver profile holds the work"; }
    as_user 'nicer status' | grep -F 'paused: the power-saver profile is on' || die "nicer status does not say why in words"
    local share
    share=$(as_user "cpu-share 3 ${cg#/sys/fs/cgroup}")
    echo "work's share under power-saver: $share"
    python3 -c "import sys; sys.exit(0 if $share < 0.01 else 1)" || die "the work used $share of the machine under power-saver"
    as_root 'busctl set-property net.hadess.PowerProfiles /net/hadess/PowerProfiles net.hadess.PowerProfiles ActiveProfile s balanced' ||
        die "power-profiles-daemon refused balanced"
    poll_user 100 "nicer status --json | grep -q '\"held_by\": *\"\"'" || die "the work was not given back after balanced"
    as_user 'nicer set resume-delay=60' || die "nicer set resume-delay=60"
}

# logind's own hints of the volunteer's graphical session, started as a display manager starts one (a PAM
# session of type x11 from a system service: logind's Display for the user, and the only kind whose IdleHint
# logind lets be set), set by the session's owner as a screen locker (SetLockedHint) or a desktop's idle
# tracking (SetIdleHint) sets them: the volunteer's nicerd says away, and the away profile's largest share
# holds instead of the here one's. Another user cannot set them. Then nicerd itself sets the IdleHint, asked to
# (logind-idle-hint), from an X server's idle time: the call real logind allows the session's owner.
check_logind_presence() {
    local sid path
    as_root 'systemd-run --unit=nicer-vm-desktop -E XDG_SESSION_TYPE=x11 -E XDG_SESSION_CLASS=user runuser -l volunteer -c "exec sleep 600"' ||
        die "starting a graphical session for the volunteer"
    trap "as_root 'systemctl stop nicer-vm-desktop' || true" EXIT
    poll_user 100 'test "$(loginctl show-session "$(loginctl show-user volunteer -P Display)" -P Type)" = x11' ||
        die "logind's display session of the volunteer is not the graphical one"
    sid=$(as_user 'loginctl show-user volunteer -P Display') || die "loginctl show-user"
    path=$(as_user "busctl --system call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager GetSession s $sid" | cut -d'"' -f2)
    echo "the volunteer's display session: $sid ($path)"
    set_hint() { as_user "busctl --system call org.freedesktop.login1 $path org.freedesktop.login1.Session $1 b $2"; }
    presence_is() { poll_user 100 "nicer status --json | python3 -c \"import json, sys; s = json.load(sys.stdin); sys.exit(0 if s['presence'] == '$1' and s['presence_reason'] == '$2' else 1)\""; }
    as_user 'nicer set max-share=0.3 away-max-share=1' || die "nicer set max-share"
    presence_is here "the desktop says it is in use" || { as_user 'nicer status' || true; die "nicerd does not say here from logind"; }
    [ "$(status_field "['presence_source']")" = "logind (session $sid)" ] || die "the source is not logind's session $sid"
    poll_user 100 "nicer status --json | grep -q '\"held_by\": *\"profile\"'" || die "the here profile's largest share does not hold the work"
    set_hint SetLockedHint true || die "the volunteer cannot set their session's LockedHint"
    presence_is away "the screen is locked" || { as_user 'nicer status' || true; die "a locked session is not away"; }
    poll_user 100 "nicer status --json | grep -q '\"held_by\": *\"\"'" || die "the away profile does not free the work"
    as_user 'nicer status' | grep -F 'you          away: the screen is locked' || die "nicer status does not say why in words"
    ensure_user second 1200 || die "adding the user second"
    if as_other second 1200 "busctl --system call org.freedesktop.login1 $path org.freedesktop.login1.Session SetLockedHint b false"; then
        die "another user unlocked the volunteer's session"
    fi
    presence_is away "the screen is locked" || die "another user's call changed the presence"
    set_hint SetLockedHint false || die "SetLockedHint false"
    presence_is here "the desktop says it is in use" || die "an unlocked session is not here"
    set_hint SetIdleHint true || die "the volunteer cannot set their session's IdleHint"
    presence_is away "the desktop says it is idle" || die "an idle session is not away"
    if as_other second 1200 "busctl --system call org.freedesktop.login1 $path org.freedesktop.login1.Session SetIdleHint b false"; then
        die "another user set the volunteer's session in use"
    fi
    set_hint SetIdleHint false || die "SetIdleHint false"
    presence_is here "the desktop says it is in use" || die "a session in use again is not here"
    as_user 'nicer set max-share=1' || die "nicer set max-share=1"
    # Asked to (logind-idle-hint), nicerd tells the real logind's IdleHint what a source above logind says: an X
    # server of the volunteer's without input, found in the user manager's environment, is away after the delay.
    as_user 'systemd-run --user --unit=nicer-vm-xvfb Xvfb :7 -nolisten tcp' || die "starting Xvfb :7"
    as_user 'systemctl --user set-environment DISPLAY=:7' || die "set-environment DISPLAY"
    as_user 'nicer set away-delay=2 logind-idle-hint=1 && systemctl --user restart nicerd' || die "restarting nicerd"
    presence_is away "no input for 2 s" || { as_user 'nicer status' || true; die "no input on :7 is not away"; }
    [ "$(status_field "['presence_source']")" = "XScreenSaver on :7" ] || die "the source is not the X server"
    poll_user 100 "test \"\$(loginctl show-session $sid -P IdleHint)\" = yes" || die "nicerd did not set logind's IdleHint"
    as_user 'nicer set logind-idle-hint=0' || die "nicer set logind-idle-hint=0"
    poll_user 100 "test \"\$(loginctl show-session $sid -P IdleHint)\" = no" || die "nicerd did not take its IdleHint back"
    # The X server gone, logind answers again (no restart needed).
    as_user 'systemctl --user stop nicer-vm-xvfb; systemctl --user unset-environment DISPLAY' || die "stopping Xvfb"
    as_user 'nicer set away-delay=180' || die "nicer set away-delay=180"
}

# The sleep policy against the real logind and polkit, from both sides. logind's policy grants a sleep inhibitor
# without a password to the programs of a local session only, not to a user service: with keep-awake=1 the
# volunteer's nicerd is refused, asks for no password, and says why (the guest has no desktop portal either).
# An administrator's polkit rule for the volunteer (docs/user-guide.md, "Sleep") lets it hold a "sleep" block
# inhibitor while the work runs on mains (the guest has no battery), which root sees in systemd-inhibit --list
# under the volunteer's uid; a pause and keep-awake=0 release it. Another user, without the rule, is refused.
check_keep_awake() {
    local inhibitor="grep -E '^ *nicer +1000 +volunteer .* sleep +volunteer work runs on mains power.* block'"
    local rule=/etc/polkit-1/rules.d/50-nicer-keep-awake.rules
    as_root "systemd-inhibit --list --no-pager --no-legend | $inhibitor" && die "an inhibitor of nicer's before keep-awake=1"
    as_user 'nicer set keep-awake=1' || die "nicer set keep-awake=1"
    poll_user 100 "nicer status --json | grep -q 'the machine cannot be kept awake: logind refused'" || { as_user 'nicer status' || true; die "nicerd does not say that logind refused"; }
    as_user 'nicer status' | grep -F 'sleep        the machine cannot be kept awake: logind refused' || die "nicer status does not say why the machine is not kept awake"
    as_root "systemd-inhibit --list --no-pager --no-legend | $inhibitor" && die "logind granted a user service a sleep inhibitor"
    as_root "cat > $rule" <<'RULE' || die "writing the polkit rule"
polkit.addRule(function(action, subject) {
    if (action.id == "org.freedesktop.login1.inhibit-block-sleep" && subject.user == "volunteer") {
        return polkit.Result.YES;
    }
});
RULE
    trap "as_root 'rm -f $rule' || true" EXIT
    # nicerd asks again a minute after a refusal; a restart asks at once.
    as_user 'systemctl --user restart nicerd' || die "restarting nicerd"
    poll_user 300 "nicer status --json | grep -q '\"keeping_awake\": *true'" || { as_user 'nicer status' || true; die "nicerd does not keep the machine awake under the rule"; }
    as_root 'systemd-inhibit --list --no-pager --no-legend'
    as_root "systemd-inhibit --list --no-pager --no-legend | $inhibitor" || die "logind does not list nicer's sleep inhibitor"
    as_user 'nicer status' | grep -F 'sleep        kept awake: the work runs on mains power (logind)' || die "nicer status does not say it keeps the machine awake"
    ensure_user second 1200 || die "adding the user second"
    if as_other second 1200 "busctl --system call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager Inhibit ssss sleep x y block"; then
        die "another user got a sleep inhibitor without the rule"
    fi
    as_user 'nicer pause' || die "nicer pause"
    poll_user 100 "nicer status --json | grep -q '\"sleep_note\": *\"may sleep: the work is paused\"'" || die "a pause does not let the machine sleep"
    as_root "systemd-inhibit --list --no-pager --no-legend | $inhibitor" && die "logind still lists nicer's inhibitor while the work is paused"
    as_user 'nicer resume' || die "nicer resume"
    poll_user 100 "nicer status --json | grep -q '\"keeping_awake\": *true'" || die "nicerd does not keep the machine awake after resume"
    as_user 'nicer set keep-awake=0' || die "nicer set keep-awake=0"
    poll_user 100 "nicer status --json | grep -q '\"keeping_awake\": *false'" || die "keep-awake=0 does not let the machine sleep"
    as_root "systemd-inhibit --list --no-pager --no-legend | $inhibitor" && die "logind still lists nicer's inhibitor after keep-awake=0"
    return 0
}

check_cpu_usage_nsec() {
    local a
    a=$(as_user 'systemctl --user show -P CPUUsageNSec nicer.slice')
    echo "CPUUsageNSec: $a"
    [[ $a =~ ^[0-9]+$ ]] || die "systemd does not account CPUUsageNSec for nicer.slice"
    poll_user 300 "test \$(systemctl --user show -P CPUUsageNSec nicer.slice) -gt $a" ||
        die "CPUUsageNSec did not grow in 30 s while the work ran"
}

# The build's own integration tests of the usermanager layer, against logind's user manager: here FreezeUnit
# and CPUUsageNSec exist, so a skip is a failure.
check_usermanager_integration_tests() {
    local bin=$tests_build/tests/usermanager/nicer_usermanager_integration_tests
    [ -x "$bin" ] || die "$bin is not built (packaging/dev.sh build)"
    to_guest "$bin" volunteer@127.0.0.1:/tmp/
    as_user '/tmp/nicer_usermanager_integration_tests' | tee -a /dev/stderr | tail -n 3
    local skipped
    skipped=$(as_user '/tmp/nicer_usermanager_integration_tests 2>/dev/null | grep -c NICER-TEST-SKIPPED' || true)
    [ "$skipped" = 0 ] || die "$skipped usermanager integration tests were skipped on the real platform"
}

check_kill9_leaves_no_work() {
    local cg pid
    cg=$(slice_cgroup)
    [ -n "$(as_user "cat $cg/cgroup.procs $cg/*/cgroup.procs 2>/dev/null")" ] || die "no work runs in nicer.slice"
    pid=$(as_user 'systemctl --user show -P MainPID nicerd.service')
    as_user "kill -9 $pid; start=\$(date +%s%N); while [ -n \"\$(cat $cg/cgroup.procs $cg/*/cgroup.procs 2>/dev/null)\" ]; do
        [ \$(( (\$(date +%s%N) - start) / 1000000 )) -lt 10000 ] || exit 1; sleep 0.02; done
        echo \"the work was gone \$(( (\$(date +%s%N) - start) / 1000000 )) ms after kill -9\"" ||
        die "processes of the work were still running 10 s after kill -9 of nicerd"
}

to_guest "$root/tests/harness/xvfb-tray-host.sh" volunteer@127.0.0.1:/tmp/
check_tray_from_desktop_entry() {
    as_user 'pkill -x nicer-tray; rm -f /tmp/display; exec_line=$(sed -n "s/^Exec=//p" /usr/share/applications/org.nicer.Tray.desktop | head -n1)
        set -- ${exec_line//%[a-zA-Z]/}
        nohup /tmp/xvfb-tray-host.sh bash -c "echo \$DISPLAY >/tmp/display; exec \"\$@\"" _ "$@" >/tmp/tray.log 2>&1 &
        echo $! >/tmp/tray-host.pid'
    poll_user 300 'test -s /tmp/display' || die "the X server did not start"
    poll_user 600 'DISPLAY=$(cat /tmp/display) xwininfo -root -tree | grep -q "\"nicer: spare CPU for volunteer computing\""' ||
        { as_user 'cat /tmp/tray.log'; die "the tray's window did not appear"; }
    as_user 'test "$(readlink /proc/$(pgrep -x nicer-tray)/exe)" = /usr/bin/nicer-tray' || die "not one /usr/bin/nicer-tray process: $(as_user 'pgrep -a nicer-tray')"
    poll_user 300 'test $(busctl --user call org.nicer.Daemon /org/nicer/Daemon org.nicer.Daemon1 GetHistory | cut -d" " -f2) -ge 3' ||
        die "nicerd has no samples for the tray"
    sleep 3
    as_user 'DISPLAY=$(cat /tmp/display) xwd -root -silent >/tmp/tray.xwd' || die "no screenshot (xwd)"
    from_guest volunteer@127.0.0.1:/tmp/tray.xwd "$out/tray.xwd"
    convert "$out/tray.xwd" "$out/tray.png" && rm "$out/tray.xwd" && echo "screenshot: $out/tray.png"
    as_user 'busctl --user list | grep -q "org.nicer.Tray "' || die "the tray does not own org.nicer.Tray on the session bus"
    as_user 'kill $(cat /tmp/tray-host.pid)'
}

# The work's share while a SYSTEM service hogs every CPU: the case where CPUWeight=idle cannot help (cpu.idle
# is idle relative to its siblings only, and the whole user slice competes with system.slice at equal weight)
# and nicer's loop must. The first 10 s (the band widening) and the 20 s after are measured apart.
hog_shares() { # CGROUP [steady]: the work's and the hog's shares, first 10 s then 20 s (steady: 10 s after 3 s)
    as_root 'systemd-run --system --quiet --unit=nicer-vm-hog -p CPUAccounting=yes stress-ng --cpu 0 --timeout 600s'
    if [ "${2:-}" = steady ]; then
        as_user "sleep 3; cpu-share 10 $1 /system.slice/nicer-vm-hog.service"
    else
        as_user "cpu-share 10 $1 /system.slice/nicer-vm-hog.service; cpu-share 20 $1 /system.slice/nicer-vm-hog.service"
    fi
    as_root 'systemctl stop nicer-vm-hog.service'
}
check_system_hog_nicer() {
    local cg shares
    as_user 'nicer status >/dev/null' || die "nicerd does not answer"
    cg=$(slice_cgroup)
    shares=$(hog_shares "${cg#/sys/fs/cgroup}") || die "measuring the shares"
    echo "$shares" | sed -n '1s/^/nicer, first 10 s: work, hog /p; 2s/^/nicer, next 20 s: work, hog /p' | tee -a "$out/figures.txt"
    local steady
    steady=$(echo "$shares" | sed -n 2p | cut -d' ' -f1)
    python3 -c "import sys; sys.exit(0 if $steady <= 0.10 else 1)" ||
        die "the work kept $steady of the machine over 20 s beside a system service's hog (at most 0.10)"
}
check_system_hog_idle_weight() {
    as_user 'systemctl --user stop nicerd.service' || die "stopping nicerd"
    as_user 'systemd-run --user --quiet --unit=nicer-vm-idle-work -p CPUWeight=idle sh -c "for i in \$(seq \$(nproc)); do md5sum /dev/zero & done; wait"' ||
        die "starting the work under CPUWeight=idle alone"
    local cg shares
    cg=$(as_user 'systemctl --user show -P ControlGroup nicer-vm-idle-work.service')
    as_user "cat /sys/fs/cgroup$cg/cpu.idle" | grep -qx 1 || die "CPUWeight=idle did not set cpu.idle"
    # No loop here, so no onset to measure apart: 10 s once the kernel has settled.
    shares=$(hog_shares "$cg" steady) || die "measuring the shares"
    local session
    session=$(session_hog_shares "$cg") || die "measuring the shares beside the session hog"
    as_user 'systemctl --user stop nicer-vm-idle-work.service'
    echo "$shares" | sed 's/^/CPUWeight=idle alone beside a system hog (10 s): work, hog /' | tee -a "$out/figures.txt"
    echo "$session" | sed 's/^/user slice with CPUWeight=idle alone beside a login-session hog (10 s): work, hog /' | tee -a "$out/figures.txt"
    local steady
    steady=$(echo "$shares" | cut -d' ' -f1)
    python3 -c "import sys; sys.exit(0 if $steady >= 0.25 else 1)" ||
        die "under CPUWeight=idle alone the work kept only $steady beside the system hog: the comparison shows nothing"
    python3 -c "import sys; sys.exit(0 if float('$session'.split()[0]) >= 0.25 else 1)" ||
        die "under CPUWeight=idle alone the work kept only $session beside the session hog: the comparison shows nothing"
}

# A hog of the user's own, a service of logind's user manager beside nicer.slice: cpu.idle already keeps the
# work behind it, so nicerd answers only what runs outside the user manager (the outside signal) and leaves
# the work's quota whole; the kernel, not the quota, holds the work back. Every period's sample from
# GetHistory is checked, not only the last.
check_sibling_hog_keeps_quota() {
    as_user 'nicer status >/dev/null' || die "nicerd does not answer"
    poll_user 300 'nicer status --json | grep -q "\"signal\": *\"outside\""' ||
        die "with cpu.idle 1 nicerd does not answer the outside part: $(as_user 'nicer status' | grep signal)"
    as_user 'systemd-run --user --quiet --unit=nicer-vm-sibling-hog -p CPUAccounting=yes stress-ng --cpu 0 --timeout 600s' ||
        die "starting the sibling hog"
    local cg hogcg since shares verdict
    cg=$(slice_cgroup)
    hogcg=$(as_user 'systemctl --user show -P ControlGroup nicer-vm-sibling-hog.service')
    since=$(as_user 'date +%s%6N')
    shares=$(as_user "cpu-share 10 ${cg#/sys/fs/cgroup} $hogcg") || die "measuring the shares"
    verdict=$(as_user 'busctl --user --json=short call org.nicer.Daemon /org/nicer/Daemon org.nicer.Daemon1 GetHistory' |
        python3 -c "
import json, sys
# The periods wholly beside the hog: not the one it started in (nicerd's default period, 1 s), where the work
# still held the machine before it and the ssh session that started it ran outside the user manager.
samples = [s for s in json.load(sys.stdin)['data'][0] if s[0] > $since + 1000000]
# A band may only answer what ran outside the user manager (s[4] over the 5% band: the guest's own ssh and
# checks, which under TCG took 3 periods of 11 in one CI run); the sibling never cuts the quota, never counts as
# overload, and is never taken for the outside: the median outside part stays far under the hog's 0.95, and
# most periods have the whole machine.
cut = [s for s in samples if (s[5] < 1.0 and s[4] <= 0.05) or s[7] > 0 or not s[9]]
whole = sum(1 for s in samples if s[5] == 1.0)
outside = sorted(s[4] for s in samples)
median = outside[len(outside) // 2] if outside else 1.0
print(f'{len(samples)} periods: {whole} with the quota whole, {len(cut)} cut without cause from outside, '
      f'outside part median {median:.3f}')
for s in samples:
    if s[5] < 1.0 or s[7] > 0 or not s[9]:
        why = 'cut without cause' if s in cut else 'cut'
        print(f'  {why}: time {s[0]} idle {s[1]:.3f} outside {s[4]:.3f} '
              f'quota {s[5]:.3f} multiplier {s[6]} overloads {s[7]} outside signal {s[9]}')
sys.exit(0 if len(samples) >= 5 and not cut and 2 * whole > len(samples) and median <= 0.2 else 1)")
    local answered=$?
    as_user 'systemctl --user stop nicer-vm-sibling-hog.service'
    echo "$shares" | sed -n '1s/^/beside a sibling hog (10 s): work, hog /p' | tee -a "$out/figures.txt"
    echo "$verdict" | tee -a "$out/figures.txt"
    [ "$answered" -eq 0 ] || die "the sibling hog cut the work's quota: $verdict"
    python3 -c "import sys; w, h = map(float, '$shares'.split()); sys.exit(0 if w <= 0.10 and h >= 0.7 else 1)" ||
        die "the kernel did not keep the work behind the sibling hog: work, hog $shares"
}

# Debian's boinc-client package enabled its system service in the image: found by the .wants link and by the
# system manager. Started by hand and not enabled, only the real system bus can tell.
boinc_advice() { as_user 'nicer boinc --json' | python3 -c 'import json, sys; print(json.load(sys.stdin)["system_service"])'; }
check_boinc_system_service() {
    as_user 'nicer status >/dev/null' || die "nicerd does not answer"
    poll_user 900 'nicer boinc --json | grep -q "is enabled"' || die "nicer does not report the enabled boinc-client.service: $(boinc_advice)"
    boinc_advice
    as_root 'systemctl disable --quiet boinc-client.service && systemctl start boinc-client.service' || die "starting boinc-client.service by hand"
    poll_user 900 'nicer boinc --json | grep -q "started by hand, not enabled"'
    local found=$?
    boinc_advice
    as_root 'systemctl stop boinc-client.service; systemctl enable --quiet boinc-client.service'
    [ "$found" -eq 0 ] || die "nicer did not find the running, not enabled boinc-client.service through the system bus"
}

# systemd-oomd (Ubuntu, Fedora) acts on user@.service's memory pressure: nicer.slice has its own limit (50% of
# the machine's memory by default), so the work is what gets squeezed; and the profile in force (while you're
# here, as nicerd counts a guest without a desktop) has the kernel reclaim the work's pages first above the
# fence's MemoryHigh, 45% (a static 25% before the memory rule: memory-share's default is now 1).
check_memory_limit() {
    local cg total max high
    cg=$(slice_cgroup)
    total=$(as_user "awk '/^MemTotal:/ { print \$2 * 1024 }' /proc/meminfo")
    max=$(as_user "cat $cg/memory.max")
    poll_user 100 "test \"\$(cat $cg/memory.high)\" != max && test \$(cat $cg/memory.high) -lt $max"
    high=$(as_user "cat $cg/memory.high")
    echo "MemTotal $total bytes; nicer.slice memory.max $max, memory.high $high"
    as_user 'nicer status' | grep 'memory max' || die "nicer status shows no memory limit"
    python3 -c "import sys; t, m, h = $total, $max, $high; sys.exit(0 if abs(m - t / 2) <= t * 0.01 and abs(h - t * 0.45) <= t * 0.01 else 1)" ||
        die "memory.max $max / memory.high $high are not 50% and 45% of $total"
}

# The work's swap: with a 512 MiB swap file on, nicerd (restarted, as at boot) limits the work to the fence's
# share of it (memory.swap.max: 50% of SwapTotal), so that its pages leave memory first but never fill the
# swap; and the work's slice is pointed out to systemd-oomd (ManagedOOMSwap=kill: the .deb's nicer.slice in
# the root idle slice, the user manager's, set at runtime, in the user slice).
check_swap_limit() {
    local cg swap limit oomd
    cg=$(slice_cgroup)
    as_root 'fallocate -l 512M /swapfile && chmod 600 /swapfile && mkswap -q /swapfile && swapon /swapfile' ||
        die "turning on a swap file"
    as_user 'systemctl --user restart nicerd.service && nicer status >/dev/null'
    poll_user 300 "test \"\$(cat $cg/memory.swap.max)\" != max"
    swap=$(as_user "awk '/^SwapTotal:/ { print \$2 * 1024 }' /proc/meminfo")
    limit=$(as_user "cat $cg/memory.swap.max")
    if [ "$placement" = root-slice ]; then
        oomd=$(as_root 'systemctl show -P ManagedOOMSwap nicer.slice')
    else
        oomd=$(as_user 'systemctl --user show -P ManagedOOMSwap nicer.slice')
    fi
    as_root 'swapoff /swapfile && rm -f /swapfile' || die "turning the swap file off"
    as_user 'systemctl --user restart nicerd.service && nicer status >/dev/null'
    echo "swap $swap bytes: the work's memory.swap.max $limit; nicer.slice ManagedOOMSwap=$oomd" | tee -a "$out/figures.txt"
    python3 -c "import sys; s, l = $swap, int('$limit') if '$limit'.isdigit() else -1; sys.exit(0 if abs(l - s / 2) <= 4096 else 1)" ||
        die "memory.swap.max $limit is not half of the swap's $swap bytes"
    [ "$oomd" = kill ] || die "nicer.slice has ManagedOOMSwap=$oomd, not kill"
}

# A distribution that does not delegate cpu to user managers (Ubuntu 22.04, Mint 21, RHEL 9): the same drop-in
# they ship, on the same guest. nicer falls back to freezing the slice for part of every slot through
# cgroup.freeze (no controller needed on v2), says why and how to delegate, and still yields to a system hog.
restart_user_manager() {
    as_root 'systemctl daemon-reload && systemctl restart user@1000.service && systemctl is-active user@1000.service' >/dev/null
}
check_cpu_not_delegated() {
    as_root 'mkdir -p /etc/systemd/system/user@.service.d &&
        printf "[Service]\nDelegate=\nDelegate=pids memory\n" >/etc/systemd/system/user@.service.d/nicer-vm-no-cpu.conf' ||
        die "writing the drop-in"
    restart_user_manager || die "restarting the user manager"
    as_user 'cat /sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/cgroup.controllers'
    as_user 'grep -qw cpu /sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/cgroup.controllers' &&
        die "the drop-in did not take cpu away from user@1000.service"
    as_user 'nicer status' || die "nicer status"
    local actuator note cg shares
    actuator=$(status_field "['actuator']")
    note=$(status_field "['actuator_note']")
    echo "actuator: $actuator"
    echo "note: $note"
    [ "$actuator" = freezer-duty-cycle ] || die "nicer chose '$actuator', not freezer-duty-cycle"
    [[ $note == *"Delegate=pids memory cpu"* ]] || die "the note does not give the drop-in that delegates cpu"
    as_user 'nicer status' | grep -q 'Delegate=pids memory cpu' || die "nicer status does not show the note"
    cg=$(slice_cgroup)
    shares=$(hog_shares "${cg#/sys/fs/cgroup}") || die "measuring the shares"
    echo "$shares" | sed -n '1s/^/freezer duty cycle (cpu not delegated), first 10 s: work, hog /p; 2s/^/freezer duty cycle (cpu not delegated), next 20 s: work, hog /p' | tee -a "$out/figures.txt"
    local steady
    steady=$(echo "$shares" | sed -n 2p | cut -d' ' -f1)
    as_user 'systemctl --user stop nicerd.service'
    as_root 'rm /etc/systemd/system/user@.service.d/nicer-vm-no-cpu.conf'
    restart_user_manager || die "restarting the user manager without the drop-in"
    python3 -c "import sys; sys.exit(0 if $steady <= 0.10 else 1)" ||
        die "under the freezer duty cycle the work kept $steady beside a system service's hog (at most 0.10)"
}

# What an attacker with one sudo command can leave running, as real uid 0: a process named `systemd`, with
# `--user` and an XDG_RUNTIME_DIR that makes a bus address run their program (`;unixexec:path=`), and the
# socket beside it that made the old scripts take it for a manager; and, as the volunteer, 50 processes posing
# as user managers. The maintainer scripts read none of it (the managers are the system manager's
# user@UID.service units): the marker program never runs in the reinstall and the purge below, and the fakes
# cost the purge nothing.
check_attackers_in_place() {
    as_root 'mkdir -p "/tmp/rt/a;unixexec:path=/tmp/rt/b/systemd" /tmp/rt/b
        printf "#!/bin/sh\ntouch /tmp/rt/MARKER-RAN\n" >/tmp/rt/b/bus; chmod 0755 /tmp/rt/b/bus
        python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"/tmp/rt/a;unixexec:path=/tmp/rt/b/systemd/private\")"
        printf "#!/bin/sh\nwhile :; do sleep 60; done\n" >/tmp/rt/systemd; chmod 0755 /tmp/rt/systemd
        XDG_RUNTIME_DIR="/tmp/rt/a;unixexec:path=/tmp/rt/b" setsid /tmp/rt/systemd --user </dev/null >/dev/null 2>&1 &
        rm -f /tmp/rt/MARKER-RAN' || die "placing root's fake manager"
    as_user 'mkdir -p ~/fake && printf "#!/bin/sh\nwhile :; do sleep 60; done\n" >~/fake/systemd && chmod 0755 ~/fake/systemd
        for i in $(seq 50); do XDG_RUNTIME_DIR="/run/user/1000;unixexec:path=/home/volunteer/fake" setsid ~/fake/systemd --user </dev/null >/dev/null 2>&1 & done' ||
        die "placing the volunteer's fake managers"
    echo "processes named systemd with --user, by owner: $(as_root 'ps -C systemd -o user=,args= | grep -- " --user" | sort | uniq -c')"
    as_root 'test "$(awk "/^Uid:/ { print \$2 }" /proc/$(pgrep -f "^/bin/sh /tmp/rt/systemd --user")/status)" = 0' ||
        die "root's fake manager does not run with real uid 0"
    [ "$(as_user 'pgrep -u volunteer -fc "fake/systemd --user"')" -ge 50 ] || die "fewer than 50 fake managers of the volunteer run"
}
marker_never_ran() {
    ! as_root 'test -e /tmp/rt/MARKER-RAN' || die "the attacker's program ran as root"
    echo "the attacker's marker program did not run"
}

# An upgrade (here a reinstall, which runs the same maintainer scripts) restarts a running nicerd on the new
# program in the volunteer's manager, and nothing the volunteer set is lost: the parameters, and a pause.
check_reinstall_restarts_nicerd() {
    as_user 'nicer status >/dev/null && nicer set reserve-band=0.07 && nicer pause' || die "nicer set and pause"
    local before after
    before=$(as_user 'systemctl --user show -P MainPID nicerd.service')
    as_root "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall --no-install-recommends /tmp/$(basename "$deb")" ||
        die "apt-get install --reinstall"
    as_user 'systemctl --user is-active nicerd.service' || die "nicerd.service is not active after the reinstall"
    after=$(as_user 'systemctl --user show -P MainPID nicerd.service')
    echo "nicerd's pid: $before before, $after after the reinstall; its program: $(as_user "readlink /proc/$after/exe")"
    [ "$after" != "$before" ] || die "nicerd was not restarted (pid $before)"
    as_user "test \"\$(readlink /proc/$after/exe)\" = /usr/bin/nicerd" || die "the restarted nicerd does not run the new /usr/bin/nicerd"
    marker_never_ran
    [ "$(status_field "['paused']")" = True ] || die "the pause was lost in the restart"
    [ "$(status_field "['parameters']['reserve_band']")" = 0.07 ] || die "the reserve band set before was lost in the restart"
    as_user 'nicer resume && nicer set reserve-band=0.05' || die "nicer resume"
}

# Removing the package stops everything of nicer in the lingering volunteer's manager: the tray, nicerd, the
# work in the root idle slice; and nothing starts again afterwards: no unit, slice or rule is left.
check_purge_stops_everything() {
    as_user 'rm -f ~/.config/nicer/nicerd.conf; systemctl --user restart nicerd.service; nicer status >/dev/null' ||
        die "nicerd does not answer"
    poll_user 300 "test -n \"\$(cat $root_leaf/*/cgroup.procs 2>/dev/null)\"" ||
        die "no work runs in the root idle slice before the purge"
    as_user 'rm -f /tmp/display; nohup /tmp/xvfb-tray-host.sh nicer-tray >/tmp/tray.log 2>&1 & echo $! >/tmp/tray-host.pid'
    poll_user 300 'pgrep -x nicer-tray' || die "the tray did not start"
    local processes='ps -u volunteer,second -o pid=,user=,comm=,args= | awk "\$3 ~ /^(nicerd|nicer-tray|md5sum)\$/"'
    # A second real user with nicerd and work running; before both, in the scripts' order, a user whose
    # manager does not answer (SIGSTOP) and then ends in the middle of the scan (SIGKILL once the scripts
    # reach it): nobody after it is skipped.
    ensure_user second 1200 || die "adding the user second"
    ensure_user leaver 1100 || die "adding the user leaver"
    as_other second 1200 'nicer status' >/dev/null || die "the second user's nicerd did not start"
    poll_user 300 "test -n \"\$(cat /sys/fs/cgroup/nicer.slice/nicer-work@1200.service/work/*/cgroup.procs 2>/dev/null)\"" ||
        die "no work of the second user runs before the purge"
    # Meanwhile the far end of the scripts' connection to that manager, a process of the user's, is looked at:
    # its descriptors and environment must hold nothing of root's (apt runs on a terminal, as an admin's does).
    as_root 'kill -STOP $(systemctl show -P MainPID user@1100.service); rm -f /tmp/leaver-*.txt
        nohup sh -c "for i in \$(seq 1200); do p=\$(pgrep -u leaver -f stdio-bridge | head -n1); [ -n \"\$p\" ] && break; sleep 0.1; done
            ls -l /proc/\$p/fd >/tmp/leaver-fds.txt 2>&1; xargs -0 -n1 echo </proc/\$p/environ >/tmp/leaver-env.txt 2>&1
            systemctl kill -s KILL user@1100.service" >/tmp/leaver.log 2>&1 &'
    as_user "$processes; systemctl --user list-units --no-legend 'nicer*'"
    local started elapsed
    started=$(date +%s)
    as_root 'DEBIAN_FRONTEND=noninteractive script -qec "apt-get purge -y -q nicer" /dev/null' || die "apt-get purge"
    elapsed=$(($(date +%s) - started))
    local fds env
    fds=$(as_root 'cat /tmp/leaver-fds.txt' || true)
    env=$(as_root 'cat /tmp/leaver-env.txt' || true)
    echo "the user's end of the scripts' connection, its descriptors: $fds"
    echo "and its environment: $env"
    grep -q 'socket:' <<<"$fds" || die "the user's end of the connection to the stuck manager was not seen"
    ! grep -E '/dev/(pts|tty|console)' <<<"$fds" || die "root's terminal reached a process of the user"
    ! grep -E '^(SSH_|SUDO_|HOME=/root|TERM=)' <<<"$env" || die "root's environment reached a process of the user"
    echo "the purge took $elapsed s with 50 fake managers, a manager that stopped answering and ended during it, and two users' nicer running" |
        tee -a "$out/figures.txt"
    marker_never_ran
    # The scripts' own bound is 120 s for the whole operation; apt and dpkg around them take the rest.
    [ "$elapsed" -le 240 ] || die "the purge took $elapsed s, over the scripts' bound of 120 s and apt's own time"
    # The units stop within apt's run; the tray ends on the SIGTERM the scripts sent (polled, 10 s at most).
    poll_user 100 "test -z \"\$($processes)\"" || true
    local left units load
    left=$(as_user "$processes")
    # Nothing can start it again: the manager has forgotten the unit (postrm reloaded it).
    load=$(as_user 'systemctl --user show -P LoadState nicerd.service')
    units=$(as_user 'systemctl --user list-units --no-legend --state=active,activating,reloading "nicer*"' || true)
    as_user 'kill $(cat /tmp/tray-host.pid) 2>/dev/null' || true
    local system
    # A slice loads without a file (systemd makes any slice on demand): gone means no file and not active.
    system=$(as_root 'echo "work unit $(systemctl show -P LoadState nicer-work@1000.service)," \
            "slice $(systemctl show -P ActiveState nicer.slice) from [$(systemctl show -P FragmentPath nicer.slice)]," \
            "files [$(ls /usr/lib/systemd/system/nicer* /usr/lib/systemd/system/user@.service.d/nicer.conf /run/nicer/work/* /usr/libexec/nicer 2>/dev/null)]," \
            "cgroup [$(ls -d /sys/fs/cgroup/nicer.slice 2>/dev/null)]"')
    echo "after the purge: $system"
    [ "$system" = "work unit not-found, slice inactive from [], files [], cgroup []" ] ||
        die "the system part is not gone after the purge: $system"
    echo "after the purge: processes [$left], active units [$units], nicerd.service $load"
    [ "$load" = not-found ] || die "the user manager still has nicerd.service after the purge ($load)"
    [ -z "$left" ] || die "processes of nicer left after the purge: $left"
    [ -z "$units" ] || die "units of nicer still active after the purge: $units"
}

run_checks() {
    check "the release .deb installs with apt" check_deb_installs
    check "nicerd starts by D-Bus activation from the session bus, puts the work in the root idle slice and says so" check_dbus_activation
    # The root idle slice (the .deb's system part), where nicerd puts the work by default.
    check "the work runs as the volunteer in nicer.slice, directly under the root cgroup with cpu.idle 1" check_root_slice
    check "root idle slice: cpu.max of the work's leaf follows the quota" check_cpu_max_follows_quota
    check "root idle slice: the leaf has the work's memory limit" check_memory_limit
    check "root idle slice: pause freezes the leaf, resume thaws it" check_pause_freezes
    check "root idle slice: max-instances=1 freezes the second instance's own leaf, 0 thaws it" check_max_instances
    check "power-profiles-daemon's power-saver profile pauses the work, balanced gives it back" check_power_saver_pauses
    check "logind's lock and idle hints of the volunteer's graphical session, set by its owner only, make nicerd away and put the away profile in force; asked to, nicerd sets the idle hint from the X server's idle time" check_logind_presence
    check "keep-awake: logind refuses the volunteer's nicerd (a user service) a sleep inhibitor without a password, and nicer says so; under an administrator's polkit rule it holds one while the work runs on mains and releases it on a pause and when turned off; another user stays refused" check_keep_awake
    check "the tray starts from its desktop entry under Xvfb and reaches nicerd (the work in the root idle slice; screenshot)" check_tray_from_desktop_entry
    check "root idle slice: a hog in the volunteer's login session leaves the work at most 0.02 of the machine" check_session_hog_root_slice
    check "no user can start, stop or change an instance through the system manager, reach another's socket, or run work as root" check_refusals
    check "root idle slice: BOINC's client runs there and nicerd reaches it over its GUI RPC" check_boinc_root_slice
    check "root idle slice: a program of the user's that holds the host's link keeps nothing once the user's manager ends" check_host_bound_to_manager
    check "root idle slice: the work dies first: oom_score_adj above every process of the user, and the OOM killer takes the work, not the session's program" check_oom_kills_work_first
    check "root idle slice, no swap: the memory rule ends an instance before the kernel must kill, and gives it back" check_memory_rule_no_swap
    check "root idle slice: with swap, the work may use half of it (memory.swap.max), and systemd-oomd may pick it (ManagedOOMSwap=kill)" check_swap_limit
    check "root idle slice: one user's work at its TasksMax leaves a second user's work room to start" check_tasks_bounded_per_user
    check "root idle slice: kill -9 of nicerd stops the work within seconds (the link)" check_kill9_root_slice
    check "root idle slice: a restart of the user manager (as at logout) stops the work" check_manager_restart_root_slice
    check "root idle slice: a crashed work host takes its work along, and nicerd starts a new one" check_host_crash_root_slice
    check "root idle slice: a quick restart of nicerd, its old host still stopping, keeps the work there" check_quick_restart_root_slice
    check "without the volunteer's socket the work runs in the user slice, and nicer says why and what to do" check_without_system_part
    # The user manager's slice, as on a machine without the system part (placement = user-slice).
    check "with placement = user-slice the work runs in the user manager, and nicer status says so" use_user_slice
    placement=user-slice
    check "nicer.slice has cpu.idle 1 (CPUWeight=idle)" check_cpu_idle
    check "cpu.max follows the quota, in windows as long as the period" check_cpu_max_follows_quota
    check "nicer.slice has its own memory limit (memory.max 50% of the machine's memory, memory.high 45%, the fence's, while you're here)" check_memory_limit
    check "cpu.stat counts the bandwidth windows nicerd aligns to (nr_periods)" check_bandwidth_windows_counted
    check "pause freezes nicer.slice (cgroup.events frozen 1), resume thaws it" check_pause_freezes
    check "max-instances=1 freezes the second instance's unit (FreezeUnit), 0 thaws it" check_max_instances
    check "user slice, with swap: the memory rule, woken by a PSI trigger, takes memory from the work first and gives it back" check_memory_rule_swap
    check "user slice: with swap, the work may use half of it (MemorySwapMax), and systemd-oomd may pick it (ManagedOOMSwap=kill)" check_swap_limit
    check "systemd accounts the work's CPUUsageNSec" check_cpu_usage_nsec
    check "the usermanager integration tests pass with nothing skipped (FreezeUnit, CPUUsageNSec)" check_usermanager_integration_tests
    check "beside a hog of the user's own under the same user manager, the work's quota stays whole" check_sibling_hog_keeps_quota
    check "beside a system service's hog on every CPU, the work keeps at most 0.10 of the machine" check_system_hog_nicer
    check "the system-wide boinc-client.service is found by its .wants link and through the system bus" check_boinc_system_service
    check "kill -9 of nicerd leaves no process of the work under logind's user manager" check_kill9_leaves_no_work
    check "CPUWeight=idle alone leaves the work far more beside the same system hog, and beside a hog in the login session" check_system_hog_idle_weight
    check "without cpu delegated (Delegate=pids memory), nicer freezes the slice in a duty cycle and says how to delegate" check_cpu_not_delegated
    check "an attacker's fake user managers are in place: root's with a bus address that runs a program, 50 of the volunteer's" check_attackers_in_place
    check "apt-get install --reinstall restarts a running nicerd on the new program, keeping its parameters and pause; the attacker's program never runs" check_reinstall_restarts_nicerd
    check "apt-get purge, with the attackers' fakes and a manager that ends mid-scan, stops every user's tray, nicerd and work within its bound, runs no attacker's program, and leaves no unit, slice or process" check_purge_stops_everything
}
if [ -n "$bench" ]; then
    check "the release .deb installs with apt" check_deb_installs
    check "nicerd starts by D-Bus activation from the session bus, puts the work in the root idle slice and says so" check_dbus_activation
    to_guest "$bench" root@127.0.0.1:/usr/local/bin/bench-mem
    echo "vm: $(basename "$bench") ${NICER_BENCH_ARGS:-}" >&2
    # shellcheck disable=SC2086 # the bench's own arguments, word by word
    as_root python3 /usr/local/bin/bench-mem ${NICER_BENCH_ARGS:-} >"$out/bench.jsonl" || failed=$((failed + 1))
else
    run_checks
fi

echo "vm: $suite guest, $(($(date +%s) - booted)) s in all; log: $log" >&2
for f in "${failures[@]}"; do echo "vm: failed: $f" >&2; done
echo "vm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
