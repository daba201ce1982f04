#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs what nicer needs from Debian's archive, builds it,
# and runs the main job or the whole test suite. As root, or as a user with sudo for the package step.
#
#   packaging/dev.sh run       install, build, start the tray and nicerd on the demo workload
#   packaging/dev.sh test      install, build, run `vm` on the .deb of the tested build (build/nicer_VERSION_ARCH.deb)
#                              with the sanitizers' build and the lint beside it, then the integration tests and
#                              the packaging checks, `sanitize`'s tests (the unit and CLI tests) and `fuzz`'s
#                              (what CI runs)
#   packaging/dev.sh build [TARGET...]  install and build only (everything, or the CMake targets named)
#   packaging/dev.sh package   install, build the release .deb (build-deb/nicer_VERSION_ARCH.deb)
#   packaging/dev.sh sanitize  install, build with clang, ASan and UBSan (build-sanitize), run the unit and CLI tests
#   packaging/dev.sh fuzz      install, build the libFuzzer targets in that build, run each a while
#   packaging/dev.sh fuzz-beside  run them on the sanitizers' build as it is, at the lowest priority (.ci/run)
#   packaging/dev.sh vm [ARGS]  install, build, package that build, run it in a Debian 12 guest (tests/vm/run.sh ARGS)
#   packaging/dev.sh bench [--quick]  install, build, run bench/cpu (nicer against the alternatives, plots)
#   packaging/dev.sh packages  print the Debian packages this script installs, one a line
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NICER_BUILD_DIR:-$root/build}
san_dir=${NICER_SANITIZE_BUILD_DIR:-$root/build-sanitize}

# Everything the build, the tests, the main job and the package use, all from Debian's archive, installed
# without recommends. tests/packaging checks this list against what the build really read.
packages=(
    # build
    g++ cmake ninja-build pkg-config
    libcli11-dev catch2 libsystemd-dev nlohmann-json3-dev
    libnghttp2-dev libssl-dev libpugixml-dev liburiparser-dev
    qt6-base-dev qt6-charts-dev
    libqt6opengl6-dev # Qt6Charts' CMake config needs Qt6OpenGL's; Debian 12's qt6-charts-dev does not depend on it
    # nicerd's presence sources: the compositor's idle notifications (Wayland's ext-idle-notify-v1, with
    # wayland-scanner and the protocol's XML) and X11's XScreenSaver
    libwayland-dev wayland-protocols libxcb-screensaver0-dev
    # the main job and the tests: a real user manager, real HTTP/2 servers, a real X server with a tray host
    systemd dbus-user-session dbus-daemon procps stress-ng
    nghttp2-server nghttp2-client nginx-light openssl
    xvfb xauth trayer x11-utils fonts-dejavu-core
    xdotool # input through XTest, for the presence tests' X server (tests/presence/Xvfb.h)
    python3 # packaging/check-deps.py; the local BOINC project of tests/boinc/project
    boinc-client # the real BOINC client: tests/boinc and tests/integration/test_nicerd_boinc.cpp
    # the volunteer's rules against the real daemons (tests/desktop, tests/integration/test_nicerd_rules.cpp):
    # upowerd over umockdev's emulated battery (tests/harness/fake-battery.py, Python's gi), power-profiles-daemon,
    # and gamemoded with its gamemoderun and gamemode-simulate-game
    upower umockdev gir1.2-umockdev-1.0 python3-gi power-profiles-daemon gamemode
    clang-tidy # tests/lint: clang-tidy over core/ and app/
    # dev.sh fuzz: the libFuzzer targets of tests/fuzz need clang; libFuzzer and the sanitizers' runtimes
    # are in libclang-rt-14-dev (clang only recommends it); llvm's llvm-symbolizer names a report's frames;
    # lld links that build's 38 executables in a quarter of ld's time
    clang libclang-rt-14-dev llvm lld
    # the package: manual pages, icons, shlibdeps, and the checks on the .deb and its metadata
    help2man librsvg2-bin dpkg-dev file lintian desktop-file-utils appstream imagemagick
    flatpak-builder python3-yaml # packaging/flatpak/validate.sh: the manifest, offline
    debootstrap # tests/packaging/fresh-debian.sh, and tests/vm's guest image
    # tests/vm: the guest of the real platform (systemd as PID 1, pure cgroup v2), booted and reached over ssh
    qemu-system-x86 openssh-client e2fsprogs
    ccache # every build of this script
)
# bench/cpu's foregrounds and plots, and bench/net's aria2 and nft (--loss); installed by `bench` only.
bench_packages=(wrk curl ffmpeg rt-tests python3-matplotlib aria2 nftables)

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

# install_packages [PACKAGE...]: the list above and these.
install_packages() {
    local missing=()
    for p in "${packages[@]}" "$@"; do
        dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "dev.sh: installing ${missing[*]}" >&2
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
}

# ccache for every build: a rebuild of the same checkout (a build directory removed, a flag switched back)
# takes what was compiled before. Not keyed relative to the checkout (CCACHE_BASEDIR): that rewrites the tests'
# absolute data paths into relative ones that do not hold where ctest runs them. Always, not "if ccache is
# there": every command that configures installs the list (ccache with it) first, and a configuration that
# depended on what was installed when dev.sh started made the second command on a fresh machine rebuild
# everything with the launcher the first had lacked (tests/packaging/dev-build-twice.sh).
cache_flags=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

# release_flags: sets `release` to the release configuration, as debhelper would build the .deb: build type
# None, so the flags are exactly dpkg-buildflags' (hardening, -O2, asserts on), installed under /usr.
release_flags() {
    export DEB_BUILD_MAINT_OPTIONS=hardening=+all # lintian's hardening checks: bindnow as well
    release=(-DCMAKE_BUILD_TYPE=None -DCMAKE_INSTALL_PREFIX=/usr
        -DCMAKE_CXX_FLAGS="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
        -DCMAKE_C_FLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
        -DCMAKE_EXE_LINKER_FLAGS="$(dpkg-buildflags --get LDFLAGS)")
}

# The tests' build has the release flags, so the programs the tests run are the ones `test` packages. Its tests
# are the integration tests, the lint and the packaging checks; the unit and CLI tests are built and run once,
# under the sanitizers (sanitize_tests).
# build_nicer [TARGET...]: everything, or only the targets named.
build_nicer() {
    release_flags
    cmake -S "$root" -B "$build" -G Ninja "${cache_flags[@]}" "${release[@]}" -DNICER_BUILD_TESTS=ON \
        -DNICER_UNIT_TESTS=OFF -DNICER_WERROR=ON
    cmake --build "$build" --parallel "$(nproc)" ${1:+--target "$@"}
}

# The .deb of BUILD (CPack strips the programs and dpkg-shlibdeps finds the dependencies), in BUILD.
package_build() {
    (cd "$1" && cpack -G DEB)
}

# The release .deb on its own: the release flags in build-deb, warnings not fatal (a newer compiler must not
# break a release build), no tests.
package_nicer() {
    local deb_build=${NICER_DEB_BUILD_DIR:-$root/build-deb}
    release_flags
    cmake -S "$root" -B "$deb_build" -G Ninja "${cache_flags[@]}" "${release[@]}" -DNICER_BUILD_TESTS=OFF \
        -DNICER_WERROR=OFF
    cmake --build "$deb_build" --parallel "$(nproc)"
    package_build "$deb_build"
}

# One clang build (build-sanitize) for the sanitizers and the fuzzers: AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer on everything (NICER_SANITIZE), libFuzzer's coverage with them (NICER_FUZZ),
# unoptimized with line tables only (-O0 -g1). clang compiles it in about half of GCC's time at -O0, and the
# core's files are compiled once for both. Asserts on. Linked by lld: ld took 3.5 s for one test executable
# with the sanitizers' runtimes, lld 0.8 s, and the build links 38 of them, beside the guest.
sanitize_build() {
    cmake -S "$root" -B "$san_dir" -G Ninja "${cache_flags[@]}" -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_C_COMPILER=clang -DNICER_SANITIZE=ON -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
        -DNICER_FUZZ=ON -DNICER_BUILD_TESTS=ON -DNICER_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1"
    cmake --build "$san_dir" --parallel "$(nproc)" --target "$@"
}

# The unit and CLI tests of build-sanitize under the sanitizers (built first: sanitize_build); any report fails
# its test. Each test executable runs its cases in one process (tests/sanitizers/run-unit-and-cli.py: ctest's
# process per case costs half the time under the sanitizers). The integration tests run against the plain
# build in `test`; under the sanitizers they take as long again, so CI leaves them to a run by hand (build
# build-sanitize whole, then ctest -L integration there).
sanitize_tests() {
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export LSAN_OPTIONS=suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0
    "$root/tests/sanitizers/run-unit-and-cli.py" "$san_dir" "$(nproc)"
}

# The libFuzzer targets (tests/fuzz) of build-sanitize; each runs NICER_FUZZ_SECONDS (10) on a copy of its seed
# corpus, as many at once as there are CPUs; any finding fails. Every seed runs first; the rest is new
# inputs: at 10 s, from about 8,000 (GuiRpcReplies) to 200,000 a target; longer runs by hand find more.
fuzz_run() {
    "$root/tests/fuzz/run.sh" -t "${NICER_FUZZ_SECONDS:-10}" -j "$(nproc)" "$san_dir"
}

# What `test` runs beside the guest's image and the guest, which leave part of the machine idle (the guest
# a quarter of it): the sanitizers' and the fuzzers' build, then the lint (ctest -L lint), at the lowest
# priority, so that the guest's checks run as they would alone. None of it measures anything, and none of it
# runs beside a test that measures CPU time: `test` waits for it before ctest. Run as `dev.sh side-checks`
# under setsid: a new session is a scheduling group of its own (the kernel's autogroups), whose nice 19 puts
# it behind the guest's qemu, which is in a group of its own too; a nice value alone acts only within a group,
# and left the guest half the machine.
side_checks() {
    lowest_priority
    sanitize_build nicer_unit_and_cli_tests nicer_fuzzers
    ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" -L lint
}

# lowest_priority: this process and what it starts behind everything else on the machine: nice 19 in its
# scheduling group, and the group's own nice 19 where it is one of its own (a new session, under setsid). Only
# then: a group's nice is every process's of its session, and `dev.sh fuzz-beside` typed in a terminal would
# put the whole terminal session behind everything else (its tests' foreground hogs losing to nicer's work).
lowest_priority() {
    if [ -w /proc/self/autogroup ] && [ "$(ps -o sid= -p $$ | tr -d ' ')" = "$$" ]; then
        echo 19 >/proc/self/autogroup
    fi
    renice -n 19 -p $$ >/dev/null
}

# timed WHAT COMMAND...: COMMAND, then how long it took, so that a log of `test` shows where its minutes go.
timed() {
    local what=$1 start=$SECONDS
    shift
    "$@"
    echo "dev.sh: $what took $((SECONDS - start)) s" >&2
}

# wait_for_image: the guest's image that `test` started in the background; its log if it failed.
wait_for_image() {
    local pid=$image_pid
    image_pid= # waited for: its number may be another process's by the time the EXIT trap runs
    if ! wait "$pid"; then
        cat "$image_log" >&2
        echo "dev.sh: the guest's image (tests/vm/image.sh bookworm) failed: its log is above" >&2
        return 1
    fi
}

# real_boinc_reads_input_time: tests/boinc/idle-shmem-real-client.sh once its chroot, which `test` started to
# bootstrap beside the build, is there. Exit status 77 (forky cannot be bootstrapped from the archive now) is
# said loudly and does not fail `test`: the archive's testing suite is not nicer's to keep working.
real_boinc_reads_input_time() {
    local status=0 pid=$forky_pid
    forky_pid=
    wait "$pid" || status=$?
    cat "$forky_log" >&2
    if [ "$status" -eq 0 ]; then
        "$root/tests/boinc/idle-shmem-real-client.sh" "$build" || status=$?
    fi
    if [ "$status" -eq 77 ]; then
        echo "dev.sh: NOT RUN: the real BOINC 8.2 check of /idle_detect_shmem (Debian forky could not be bootstrapped)" >&2
        return 0
    fi
    return "$status"
}

# wait_for_side: side_checks, which `test` started in the background; its log, and whether it passed.
wait_for_side() {
    local status=0 pid=$side_pid
    side_pid= # as image_pid in wait_for_image
    wait "$pid" || status=$?
    cat "$side_log" >&2
    if [ "$status" -ne 0 ]; then
        echo "dev.sh: the sanitizers' build or the lint failed: its log is above" >&2
        return 1
    fi
}

# kill_tree PID: PID and every process it started, children first; nothing for an empty PID.
kill_tree() {
    [ -n "$1" ] || return 0
    local child
    for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
        kill_tree "$child"
    done
    kill "$1" 2>/dev/null || true
}

# Ctrl-C (or the tray ending) stops everything `run` started: the tray and its X server, nicerd and the work
# (stopping nicerd.service stops the work units bound to it), the runtime unit, and a private user manager.
stop_run() {
    # A second Ctrl-C while stopping would leave the work or the user manager behind: this runs to its end.
    trap - EXIT
    trap '' INT TERM
    if [ -n "${tray_pid:-}" ]; then
        kill "$tray_pid" 2>/dev/null || true
        wait "$tray_pid" 2>/dev/null || true
    fi
    if [ -n "${unit_installed:-}" ]; then "$root/tests/harness/runtime-unit.sh" remove || true; fi
    if [ -n "${manager_started:-}" ]; then "$root/tests/harness/user-manager.sh" stop || true; fi
    echo "dev.sh: stopped nicer-tray, nicerd and the work" >&2
}

case "${1:-}" in
run)
    install_packages
    build_nicer
    # From here on every way out stops what was started; each step is marked before it starts, so that a
    # Ctrl-C in the middle of one is undone too (the harness stops only a manager it recorded).
    trap stop_run EXIT
    trap 'exit 130' INT TERM
    # nicerd needs a systemd user manager; the harness reuses the session's or starts a private one.
    manager_started=1
    eval "$("$root/tests/harness/user-manager.sh" start)"
    # This build's nicerd.service among the manager's runtime units: the tray starts nicerd through it,
    # as it does an installed nicer.
    unit_installed=1
    "$root/tests/harness/runtime-unit.sh" install "$build"
    tray=("$build/app/tray/nicer-tray" --show)
    if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        echo "dev.sh: no display: the tray runs on a private X server (Xvfb) with a tray host" >&2
        tray=("$root/tests/harness/xvfb-tray-host.sh" "${tray[@]}")
    fi
    "${tray[@]}" &
    tray_pid=$!
    echo "dev.sh: nicer-tray and nicerd run the demo workload; nicerd's status every 2 s (Ctrl-C stops them)." >&2
    echo "  Elsewhere try: XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR $build/app/cli/nicer status|pause|resume|set reserve-band=0.1" >&2
    sleep 3
    while kill -0 "$tray_pid" 2>/dev/null; do
        "$build/app/cli/nicer" status || true
        echo
        sleep 2
    done
    tray_status=0
    wait "$tray_pid" || tray_status=$?
    tray_pid=
    echo "dev.sh: nicer-tray ended by itself (exit status $tray_status)" >&2
    exit "$tray_status"
    ;;
test)
    timed "installing the packages" install_packages
    # The guest's image (tests/vm/image.sh: debootstrap, about 5 minutes on a fresh machine, mostly the archive's
    # downloads; cached afterwards) is made while the project compiles, and waited for before any test starts:
    # nothing of it runs beside a test that measures CPU time.
    image_log=$(mktemp)
    "$root/tests/vm/image.sh" bookworm >"$image_log" 2>&1 &
    image_pid=$!
    # Debian forky's BOINC 8.2 in a chroot (tests/boinc/idle-shmem-real-client.sh), the same way.
    forky_log=$(mktemp)
    "$root/tests/boinc/idle-shmem-real-client.sh" --bootstrap >"$forky_log" 2>&1 &
    forky_pid=$!
    trap 'kill_tree "$image_pid"; kill_tree "$forky_pid"; rm -f "$image_log" "$forky_log"' EXIT
    timed "the build" build_nicer
    side_log=$(mktemp)
    setsid --wait "$root/packaging/dev.sh" side-checks >"$side_log" 2>&1 &
    side_pid=$!
    trap 'kill_tree "$image_pid"; kill_tree "$forky_pid"; kill_tree "$side_pid"; rm -f "$image_log" "$forky_log" "$side_log"' EXIT
    timed "the wait for the guest's image" wait_for_image
    timed "the .deb" package_build "$build"
    timed "the guest" "$root/tests/vm/run.sh" --deb "$(ls -t "$build"/nicer_*.deb | head -n1)" --tests "$build"
    timed "the wait for the sanitizers' build and the lint, which ran beside the guest" wait_for_side
    timed "ctest" ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" -LE lint
    timed "the sanitizers' tests" sanitize_tests
    timed "BOINC 8.2 reading nicer's /idle_detect_shmem" real_boinc_reads_input_time
    # NICER_TEST_FUZZ_LATER=1: the caller runs `dev.sh fuzz-beside` itself, later (.ci/run: after its
    # packaging scripts).
    if [ -n "${NICER_TEST_FUZZ_LATER:-}" ]; then
        echo "dev.sh: the fuzzers are left to the caller (NICER_TEST_FUZZ_LATER)" >&2
    else
        timed "the fuzzers" fuzz_run
    fi
    ;;
fuzz-beside)
    # `test`'s fuzzers on its sanitizers' build, at the lowest priority: run under setsid beside work that
    # needs the machine first.
    lowest_priority
    timed "the fuzzers" fuzz_run
    ;;
side-checks)
    side_checks # `test`'s, beside the guest
    ;;
build)
    shift
    install_packages
    build_nicer "$@"
    ;;
package)
    install_packages
    package_nicer
    ;;
sanitize)
    install_packages
    sanitize_build nicer_unit_and_cli_tests
    sanitize_tests
    ;;
fuzz)
    install_packages
    sanitize_build nicer_fuzzers
    fuzz_run
    ;;
vm)
    shift
    install_packages
    build_nicer
    package_build "$build"
    "$root/tests/vm/run.sh" --deb "$(ls -t "$build"/nicer_*.deb | head -n1)" --tests "$build" "$@"
    ;;
bench)
    shift
    install_packages "${bench_packages[@]}"
    build_nicer
    /usr/bin/python3 "$root/bench/cpu/run.py" --build "$build" "$@"
    ;;
packages)
    printf '%s\n' "${packages[@]}"
    ;;
*)
    sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
