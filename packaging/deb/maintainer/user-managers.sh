# nicer in every user's manager, for the maintainer scripts (Deb.cmake configures this file into each). nicerd
# is a user service: what the package changes must reach it in each user's own manager, as that user. Nothing
# here runs a program of the package, and systemctl runs with the user's own uid and groups, never as root
# (except in root's own manager).

# Every running systemd user manager: "UID RUNTIME_DIR" a line. Found by its process, not by /run/user/UID, so
# that a manager with another runtime directory (a private one, as in the project's tests) counts too.
nicer_user_managers() {
    for proc in /proc/[0-9]*; do
        [ "$(cat "$proc/comm" 2>/dev/null)" = systemd ] || continue
        tr '\0' '\n' <"$proc/cmdline" 2>/dev/null | grep -qx -- --user || continue
        uid=$(awk '/^Uid:/ { print $2 }' "$proc/status" 2>/dev/null)
        [ -n "$uid" ] || continue
        runtime=$(tr '\0' '\n' <"$proc/environ" 2>/dev/null | sed -n 's/^XDG_RUNTIME_DIR=//p' | head -n1)
        [ -n "$runtime" ] || runtime=/run/user/$uid
        # In a chroot the host's managers show in /proc but their sockets do not: only reachable ones count.
        [ -S "$runtime/systemd/private" ] || continue
        echo "$uid $runtime"
    done
}

# nicer_systemctl UID RUNTIME_DIR ARGS...: `systemctl --user ARGS` in that manager, as its user. A manager that
# does not answer within 30 s is passed over: a package operation must not hang on one user's session.
nicer_systemctl() {
    uid=$1
    runtime=$2
    shift 2
    if [ "$uid" = 0 ]; then
        env XDG_RUNTIME_DIR="$runtime" DBUS_SESSION_BUS_ADDRESS="unix:path=$runtime/bus" \
            timeout 30 systemctl --user "$@"
        return
    fi
    user=$(getent passwd "$uid" | cut -d: -f1)
    if [ -n "$user" ]; then
        groups="--regid=$(id -g "$user") --init-groups"
    else
        groups="--regid=$uid --clear-groups"
    fi
    # shellcheck disable=SC2086 # $groups is two options
    setpriv --reuid="$uid" $groups env XDG_RUNTIME_DIR="$runtime" DBUS_SESSION_BUS_ADDRESS="unix:path=$runtime/bus" \
        timeout 30 systemctl --user "$@"
}

# The system manager, where it runs (not in a chroot or a container without systemd): the root idle slice
# (nicer.slice) and each user's nicer-work@USER.service are its units.
nicer_system() {
    [ -d /run/systemd/system ] || return 0
    timeout 30 systemctl "$@"
}

# nicer_reload UID RUNTIME_DIR: that manager reads the unit files as they are now.
nicer_reload() {
    nicer_systemctl "$1" "$2" daemon-reload || echo "nicer: the user manager of user $1 did not reload its units" >&2
}

# Stops nicer everywhere: every nicer-tray (a tray could start nicerd again), then in each user manager, once
# it has read the unit files as they are now (no "changed on disk" warning, and after the removal it forgets
# nicerd.service), nicerd (its unit, or the scope of a nicerd started in a terminal), which takes the work
# units bound to it along, and then the work's slice with anything still in it. Named together, a work unit
# could be gone (stopped with nicerd) before its own stop job and fail as "not loaded".
nicer_stop_everywhere() {
    for proc in /proc/[0-9]*; do
        if [ "$(cat "$proc/comm" 2>/dev/null)" = nicer-tray ]; then kill -TERM "${proc#/proc/}" 2>/dev/null || true; fi
    done
    nicer_user_managers | while read -r uid runtime; do
        nicer_reload "$uid" "$runtime"
        # Each name a glob (nicerd.servic[e]): globs match loaded units only, so a unit that is not there
        # (nicer never ran for that user) is no error.
        nicer_systemctl "$uid" "$runtime" stop 'nicerd.servic[e]' 'nicerd-*.scope' ||
            echo "nicer: could not stop nicerd of user $uid (see above)" >&2
        nicer_systemctl "$uid" "$runtime" stop 'nicer.slic[e]' ||
            echo "nicer: could not stop the work of user $uid (see above)" >&2
        nicer_systemctl "$uid" "$runtime" reset-failed 'nicerd*' 'nicer-work-*' 2>/dev/null || true
    done
    # Each nicerd's work host ended with its link; whatever is left in the root idle slice is stopped too.
    nicer_system daemon-reload || echo "nicer: the system manager did not reload its units" >&2
    nicer_system stop 'nicer-work@*.service' 'nicer.slic[e]' ||
        echo "nicer: could not stop the work in nicer.slice (see above)" >&2
    nicer_system reset-failed 'nicer-work@*.service' 2>/dev/null || true
}

# After an upgrade (or a reinstall): each user manager reads the new unit files, and a running nicerd restarts
# on the new program; it starts the work again with the parameters, workload and pause it kept.
nicer_restart_everywhere() {
    nicer_system daemon-reload || echo "nicer: the system manager did not reload its units" >&2
    nicer_user_managers | while read -r uid runtime; do
        nicer_reload "$uid" "$runtime"
        nicer_systemctl "$uid" "$runtime" try-restart nicerd.service ||
            echo "nicer: nicerd of user $uid did not restart: see 'systemctl --user status nicerd'" >&2
    done
}
