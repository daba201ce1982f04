#!/usr/bin/env bash
# Start/stop a private, REAL systemd user manager for nicer's tests.
#
# Usage:  eval "$(tests/harness/user-manager.sh start)"   # start (or reuse) + export env
#         tests/harness/user-manager.sh env                # print the exports only
#         tests/harness/user-manager.sh stop               # stop what *we* started
#
# WHY: the test VMs have no systemd as PID 1 and a cgroup v1 "hybrid" layout, yet nicer
# drives real systemd (transient scopes/slices, CPUQuota, cpu.shares). `systemd --user`
# runs fine there if (a) /run/systemd/system exists (sd_booted() checks it), (b) it sits in
# its OWN cgroup in every hierarchy it manages -- otherwise it treats "/" as its subtree
# and pulls every process on the machine into its init.scope -- and (c) XDG_RUNTIME_DIR is
# set (dbus-user-session then socket-activates the session bus at $XDG_RUNTIME_DIR/bus).
# On a normal systemd machine a user manager usually exists already; `start` then only
# prints the env and `stop` leaves that manager alone (it only stops a manager whose PID
# it recorded). A non-root client must live inside the manager's cgroup subtree to create
# scopes, so run such clients via `systemd-run --user`.
# stdout carries ONLY the export lines (for eval); every diagnostic goes to stderr.
set -euo pipefail

RUNTIME=${XDG_RUNTIME_DIR:-/run/user/$(id -u)}
# The manager's cgroup in each hierarchy: a unique name at the root, or a path below a parent of its own
# (NICER_UM_CGROUP=benchuser/nicer-user-manager: bench/cpu's session placement, where a login session's scope
# is the manager's sibling under user-UID.slice).
CG_NAME=${NICER_UM_CGROUP:-nicer-user-manager}
PIDFILE=$RUNTIME/nicer-user-manager.pid
LOG=$RUNTIME/nicer-user-manager.log
MARKER=$RUNTIME/nicer-user-manager.created-run-systemd-system
BUS=$RUNTIME/bus

log() { echo "user-manager: $*" >&2; }

# Default bus address unless the caller already has one for this runtime dir.
bus_addr() {
  if [[ -n ${DBUS_SESSION_BUS_ADDRESS:-} && ${XDG_RUNTIME_DIR:-} == "$RUNTIME" ]]; then
    echo "$DBUS_SESSION_BUS_ADDRESS"
  else echo "unix:path=$BUS"; fi
}
print_env() {
  printf 'export XDG_RUNTIME_DIR=%q\n' "$RUNTIME"
  printf 'export DBUS_SESSION_BUS_ADDRESS=%q\n' "$(bus_addr)"
}

# "running"/"degraded" => a usable manager answers on $RUNTIME. timeout: never hang.
manager_state() {
  XDG_RUNTIME_DIR=$RUNTIME DBUS_SESSION_BUS_ADDRESS=$(bus_addr) \
    timeout 5 systemctl --user is-system-running 2>/dev/null || true
}
manager_ready() { case "$(manager_state)" in running|degraded) return 0;; esac; return 1; }

# PID we recorded, if that process is still a live systemd.
our_pid() {
  local pid
  [[ -r $PIDFILE ]] && pid=$(<"$PIDFILE") && [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == systemd ]] && echo "$pid"
}

# Hierarchies to place the manager in. Pure cgroup2 (no hybrid): the single root.
# Hybrid/v1: only the ones the manager really uses; cpuset is skipped on purpose
# (attaching to a fresh cpuset cgroup fails until cpus/mems are set).
hierarchies() {
  if [[ -e /sys/fs/cgroup/cgroup.controllers ]]; then echo /sys/fs/cgroup; return; fi
  local h
  for h in unified systemd cpu cpuacct memory pids; do
    [[ -e /sys/fs/cgroup/$h/cgroup.procs ]] && echo "/sys/fs/cgroup/$h"
  done
}
# Every directory named $CG_NAME we may own (systemd can also create it in other v1
# hierarchies, e.g. blkio/devices, when a unit enables that controller).
our_cgroups() {
  local d
  for d in "/sys/fs/cgroup/$CG_NAME" /sys/fs/cgroup/*/"$CG_NAME"; do
    if [[ -d $d ]]; then echo "$d"; fi
  done
}

do_stop() {
  local pid i d p
  # Only touch the bus socket if we ran a manager here: on a normal machine it belongs
  # to the user's real session. (A stale one would make the next start look ready.)
  if [[ -e $PIDFILE ]]; then rm -f "$BUS"; fi
  if pid=$(our_pid); then
    log "asking manager $pid to exit"
    XDG_RUNTIME_DIR=$RUNTIME timeout 5 systemctl --user exit >&2 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then log "manager $pid did not exit; SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  fi
  rm -f "$PIDFILE"
  # Kill leftovers (units the manager failed to stop), then rmdir children first.
  for d in $(our_cgroups); do
    for ((i = 0; i < 50; i++)); do
      p=$(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | tr '\n' ' ')
      [[ -z ${p// /} ]] && break
      # shellcheck disable=SC2086
      kill -KILL $p 2>/dev/null || true; sleep 0.1
    done
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    if [[ -d $d ]]; then log "WARNING: could not remove $d"; fi
    # A parent of its own goes too, once empty (a session's cgroup beside the manager is its user's).
    if [[ $CG_NAME == */* ]]; then rmdir "${d%/"${CG_NAME#*/}"}" 2>/dev/null || true; fi
  done
  if [[ -e $MARKER ]]; then rmdir /run/systemd/system 2>/dev/null || true; rm -f "$MARKER"; fi
  log "stopped"
}

do_start() {
  if manager_ready; then log "user manager already reachable ($(manager_state))"; print_env; return 0; fi
  [[ $(id -u) -eq 0 ]] || { log "no user manager reachable and not root: cannot start one"; exit 1; }
  do_stop 2>/dev/null                            # clear stale state from a crashed run
  # A manager that was killed leaves its transient unit files (and runtime drop-ins) behind. systemd removes
  # them when it starts, but only on a tmpfs (rm_rf refuses a disk file system), and /run is on the disk on
  # these machines: the next manager would load them as ordinary unit files and refuse nicer's transient
  # units. Done here instead, as systemd does on a desktop's tmpfs /run/user/UID.
  rm -rf "$RUNTIME/systemd/transient" "$RUNTIME/systemd/user.control"
  install -d -m 0700 "$RUNTIME"
  if [[ ! -d /run/systemd/system ]]; then mkdir -p /run/systemd/system; : >"$MARKER"; fi
  local d dirs=() pid i
  while read -r d; do
    [[ -n $d ]] || continue
    if [[ $d == /sys/fs/cgroup ]]; then   # pure v2: let children use these controllers
      echo "+cpu +memory +pids" >"$d/cgroup.subtree_control" 2>/dev/null || true
    fi
    mkdir -p "$d/$CG_NAME"; dirs+=("$d/$CG_NAME")
    if [[ $d == /sys/fs/cgroup && $CG_NAME == */* ]]; then   # pure v2: the parent passes them on
      echo "+cpu +memory +pids" >"$d/${CG_NAME%%/*}/cgroup.subtree_control" 2>/dev/null || true
    fi
  done < <(hierarchies)
  # Subshell: move itself into the fresh cgroups, then exec the manager (keeps the PID).
  # Clean env so units inherit nothing from the caller; stdout/stderr (generators, early
  # errors) to the log file so $(...) in the caller does not wait on our stdout.
  # Log target: there is no journal. "console" is NOT stderr for a user manager: it
  # reopens /dev/console (the VM's serial port) per message and drops anything if that
  # is no tty. So default to kmsg (read with `dmesg`); override with NICER_UM_LOG_TARGET.
  (
    for d in "${dirs[@]}"; do echo "$BASHPID" >"$d/cgroup.procs"; done
    exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME="${HOME:-/root}" USER="$(id -un)" LOGNAME="$(id -un)" LANG=C.UTF-8 XDG_RUNTIME_DIR="$RUNTIME" \
      SYSTEMD_LOG_TARGET="${NICER_UM_LOG_TARGET:-kmsg}" SYSTEMD_LOG_LEVEL="${NICER_UM_LOG_LEVEL:-info}" \
      setsid systemd --user
  ) </dev/null >"$LOG" 2>&1 &
  pid=$!
  echo "$pid" >"$PIDFILE"
  log "started systemd --user pid $pid, cgroups: ${dirs[*]:-none}, log $LOG"
  for ((i = 0; i < 300; i++)); do               # bounded: 30 s
    if manager_ready && [[ -S $BUS ]]; then
      log "manager $(manager_state); bus at $BUS"; print_env; return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  log "manager not ready (state: '$(manager_state)', bus socket: $([[ -S $BUS ]] && echo yes || echo no)); log tail:"
  tail -n 30 "$LOG" >&2 || true; dmesg 2>/dev/null | grep -F 'systemd[' | tail -n 20 >&2 || true
  do_stop; exit 1
}

case "${1:-}" in
  start) do_start ;;
  stop) do_stop ;;
  env) print_env ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
