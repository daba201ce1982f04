# nicer in every user's manager, for the maintainer scripts (Deb.cmake configures this file into each). nicerd
# is a user service: what the package changes must reach it in each user's own manager, as that user.
#
# Root takes nothing from a user's processes here: no process is looked at, no name, argument, environment or
# file a user can write is read. The users are the system manager's running user@UID.service units, and each
# manager is reached as Debian's deb-systemd-invoke --user reaches it, with `systemctl --user --machine=UID@`:
# systemd itself runs the far end of that connection as the user, in a unit of its own, so no program of the
# user's is handed root's terminal, descriptors or environment (the output comes back through a pipe). Each
# call is bounded, the whole operation too (NICER_BUDGET seconds), and one user's failure skips nobody else.
# docs/packaging.md says why deb-systemd-invoke itself is not called.

NICER_BUDGET=${NICER_BUDGET:-120}
nicer_deadline=$(($(date +%s) + NICER_BUDGET))

# Every running user manager, by UID, as the system manager lists them. None where systemd is not PID 1 (a
# chroot, a container): there is no user manager root could reach as its user then.
nicer_user_ids() {
    [ -d /run/systemd/system ] || return 0
    timeout 30 systemctl list-units --no-legend --plain --no-pager --state=active --type=service 'user@*.service' \
        </dev/null 2>/dev/null | sed -n 's/^user@\([0-9][0-9]*\)\.service .*/\1/p' || true
}

# nicer_seconds_left: what is left of the budget, at most 20 s for one call; 0 once it is spent.
nicer_seconds_left() {
    left=$((nicer_deadline - $(date +%s)))
    if [ "$left" -le 0 ]; then echo 0; elif [ "$left" -gt 20 ]; then echo 20; else echo "$left"; fi
}

# nicer_as_user UID COMMAND ARGS...: COMMAND (systemctl or busctl) with --user --machine=UID@, with a clean
# environment, no terminal and a time bound; what it says is printed with the user's UID.
nicer_as_user() {
    uid=$1
    tool=$2
    shift 2
    left=$(nicer_seconds_left)
    if [ "$left" -eq 0 ]; then
        echo "nicer: out of time (${NICER_BUDGET} s): did not run '$tool $*' for user $uid" >&2
        return 1
    fi
    status=0
    said=$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 timeout -k 2 "$left" \
        "$tool" --user --machine="$uid@" "$@" </dev/null 2>&1) || status=$?
    # What came back is the user's manager's (or its bus's) words: no control characters reach root's terminal.
    if [ -n "$said" ]; then printf '%s\n' "$said" | tr -d '\000-\010\013-\037\177' | sed "s/^/nicer: user $uid: /" >&2; fi
    return "$status"
}

# The system manager, where it runs: the root idle slice (nicer.slice), each user's nicer-work@UID.socket
# and nicer-work@UID.service are its units.
nicer_system() {
    [ -d /run/systemd/system ] || return 0
    timeout 30 systemctl --no-ask-password "$@" </dev/null
}

# Stops nicer everywhere: in each user manager, once it has read the unit files as they are now (no "changed
# on disk" warning, and after the removal it forgets nicerd.service), the tray (the desktop entry's quit
# action, on the user's own bus, where a tray runs), then nicerd (its unit, or the scope of a nicerd started
# in a terminal), which takes the work units bound to it along, and then the work's slice with anything
# still in it. Named together, a work unit could be gone (stopped with nicerd) before its own stop job and
# fail as "not loaded". Then the root idle slice's units, which end each user's work host.
nicer_stop_everywhere() {
    for uid in $(nicer_user_ids); do
        nicer_as_user "$uid" systemctl daemon-reload || echo "nicer: the user manager of user $uid did not reload its units" >&2
        nicer_as_user "$uid" busctl --auto-start=no call org.nicer.Tray /org/nicer/Tray \
            org.freedesktop.Application ActivateAction 'sava{sv}' quit 0 0 >/dev/null 2>&1 || true
        # Each name a glob (nicerd.servic[e]): globs match loaded units only, so a unit that is not there
        # (nicer never ran for that user) is no error.
        nicer_as_user "$uid" systemctl stop 'nicerd.servic[e]' 'nicerd-*.scope' ||
            echo "nicer: could not stop nicerd of user $uid (see above)" >&2
        nicer_as_user "$uid" systemctl stop 'nicer.slic[e]' ||
            echo "nicer: could not stop the work of user $uid (see above)" >&2
        nicer_as_user "$uid" systemctl reset-failed 'nicerd*' 'nicer-work-*' >/dev/null 2>&1 || true
    done
    nicer_system stop 'nicer-work@*.socket' 'nicer-work@*.service' 'nicer.slic[e]' ||
        echo "nicer: could not stop the work in nicer.slice (see above)" >&2
    nicer_system reset-failed 'nicer-work@*.service' 'nicer-work@*.socket' 2>/dev/null || true
    nicer_system daemon-reload || echo "nicer: the system manager did not reload its units" >&2
}

# After an install, an upgrade or a reinstall: the system manager reads the new units, and each running user
# manager gets its socket to the root idle slice at once (the drop-in brings it with every manager that starts
# from now on). On an upgrade, each user manager reads the new unit files, and a running nicerd restarts on
# the new program; it starts the work again with the parameters, workload and pause it kept.
nicer_configure_everywhere() {
    upgrade=$1
    nicer_system daemon-reload || echo "nicer: the system manager did not reload its units" >&2
    for uid in $(nicer_user_ids); do
        nicer_system start "nicer-work@$uid.socket" ||
            echo "nicer: the idle slice's socket of user $uid did not start (see above)" >&2
        [ -n "$upgrade" ] || continue
        nicer_as_user "$uid" systemctl daemon-reload || echo "nicer: the user manager of user $uid did not reload its units" >&2
        nicer_as_user "$uid" systemctl try-restart nicerd.service ||
            echo "nicer: nicerd of user $uid did not restart: see 'systemctl --user status nicerd'" >&2
    done
}
