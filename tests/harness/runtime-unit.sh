#!/usr/bin/env bash
# Install or remove nicerd's systemd user unit for THIS build, in the user manager's runtime unit directory
# ($XDG_RUNTIME_DIR/systemd/user: it vanishes at logout and never touches the home directory). The tray then
# starts nicerd the way an installed nicer does: through `nicerd.service`.
#
# Usage:  tests/harness/runtime-unit.sh install BUILD_DIR [NICERD_ARGS...]
#         tests/harness/runtime-unit.sh remove
# With NICER_STATE_DIR set, nicerd keeps its config and state there instead of the home directory, and with
# NICER_UNIT_PATH it finds programs (the workload's clients) only there (tests).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${XDG_RUNTIME_DIR:?XDG_RUNTIME_DIR must be set (eval tests/harness/user-manager.sh start first)}"
unit_dir=$XDG_RUNTIME_DIR/systemd/user
unit=$unit_dir/nicerd.service

case "${1:-}" in
install)
    build=$(cd "${2:?usage: runtime-unit.sh install BUILD_DIR [NICERD_ARGS...]}" && pwd)
    shift 2
    mkdir -p "$unit_dir"
    # The installed unit with this build's nicerd; extra arguments (e.g. a test's --period) are appended.
    environment=
    if [ -n "${NICER_STATE_DIR:-}" ]; then
        mkdir -p "$NICER_STATE_DIR"
        environment="Environment=XDG_STATE_HOME=$NICER_STATE_DIR XDG_CONFIG_HOME=$NICER_STATE_DIR"
    fi
    if [ -n "${NICER_UNIT_PATH:-}" ]; then
        environment="${environment:+$environment\n}Environment=PATH=$NICER_UNIT_PATH"
    fi
    sed -e "s|@CMAKE_INSTALL_FULL_BINDIR@/nicerd|$build/app/daemon/nicerd${*:+ $*}|" \
        -e "s|^\[Service\]\$|[Service]\n$environment|" \
        "$root/resources/nicerd.service.in" >"$unit.tmp"
    mv "$unit.tmp" "$unit"
    systemctl --user daemon-reload
    ;;
remove)
    systemctl --user stop nicerd.service 2>/dev/null || true
    rm -f "$unit"
    systemctl --user daemon-reload
    systemctl --user reset-failed nicerd.service 2>/dev/null || true
    ;;
*)
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
