#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs what nicer needs from Debian's archive, builds it,
# and runs the main job or the whole test suite. As root, or as a user with sudo for the package step.
#
#   packaging/dev.sh run     install, build, start the tray and nicerd on the demo workload
#   packaging/dev.sh test    install, build, run every test (what CI runs)
#   packaging/dev.sh build   install and build only
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NICER_BUILD_DIR:-$root/build}

# Build and test dependencies, all from Debian's archive.
packages=(
    g++ cmake ninja-build pkg-config
    libcli11-dev catch2 libsystemd-dev nlohmann-json3-dev
    libnghttp2-dev libssl-dev libpugixml-dev
    qt6-base-dev qt6-charts-dev
    systemd dbus-user-session procps stress-ng
    nghttp2-server nghttp2-client nginx-light openssl
    xvfb xauth trayer fonts-dejavu-core
)

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        echo "dev.sh: installing packages needs root: run as root or install sudo" >&2
        exit 1
    fi
}

install_packages() {
    local missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "dev.sh: installing ${missing[*]}" >&2
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
}

build_nicer() {
    cmake -S "$root" -B "$build" -G Ninja -DNICER_BUILD_TESTS=ON -DNICER_WERROR=ON
    cmake --build "$build" --parallel "$(nproc)"
}

case "${1:-}" in
run)
    install_packages
    build_nicer
    # nicerd needs a systemd user manager; the harness reuses the session's or starts a private one.
    eval "$("$root/tests/harness/user-manager.sh" start)"
    # This build's nicerd.service among the manager's runtime units: the tray starts nicerd through it,
    # as it does an installed nicer.
    "$root/tests/harness/runtime-unit.sh" install "$build"
    tray=("$build/app/tray/nicer-tray" --show)
    if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        echo "dev.sh: no display: the tray runs on a private X server (Xvfb) with a tray host" >&2
        tray=("$root/tests/harness/xvfb-tray-host.sh" "${tray[@]}")
    fi
    "${tray[@]}" &
    tray_pid=$!
    trap 'kill "$tray_pid" 2>/dev/null; wait "$tray_pid" 2>/dev/null; "$root/tests/harness/runtime-unit.sh" remove' \
        EXIT INT TERM
    echo "dev.sh: nicer-tray and nicerd run the demo workload; nicerd's status every 2 s (Ctrl-C stops both)." >&2
    echo "  Elsewhere try: XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR $build/app/cli/nicer status|pause|resume|set reserve-band=0.1" >&2
    sleep 3
    while kill -0 "$tray_pid" 2>/dev/null; do
        "$build/app/cli/nicer" status || true
        echo
        sleep 2
    done
    ;;
test)
    install_packages
    build_nicer
    cd "$build"
    exec ctest --output-on-failure --parallel "$(nproc)"
    ;;
build)
    install_packages
    build_nicer
    ;;
*)
    sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
