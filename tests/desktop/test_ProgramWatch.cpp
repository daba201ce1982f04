#include "Poll.h"
#include "TempDir.h"
#include "desktop/ProgramWatch.h"
#include "fakes/ChildProcess.h"
#include "util/UniqueFd.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nicer::desktop;
using namespace std::chrono_literals;
using Names = std::vector<std::string>;

namespace {

/// A process in a fake /proc: its comm, its command line (NUL-separated, as the kernel writes it) and, where
/// given, its exe link.
void addProcess(const std::filesystem::path& proc, int pid, const std::string& comm, std::string cmdline,
                const std::string& exe = {}) {
    const auto dir = proc / std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "comm") << comm << '\n';
    std::replace(cmdline.begin(), cmdline.end(), ' ', '\0');
    std::ofstream(dir / "cmdline") << cmdline;
    if (!exe.empty()) {
        std::filesystem::create_symlink(exe, dir / "exe");
    }
}

} // namespace

TEST_CASE("named programs are found by their kernel name, their command or their executable",
          "[desktop][ProgramWatch]") {
    nicer::test::TempDir proc("nicer-fake-proc");
    addProcess(proc.path, 1, "systemd", "/sbin/init splash ");
    addProcess(proc.path, 2, "kthreadd", "");     // a kernel thread: no command line
    addProcess(proc.path, 37, "zombie-game", ""); // a zombie: no command line either
    addProcess(proc.path, 412, "blender", "/opt/blender/blender --factory-startup ");
    addProcess(proc.path, 413, "StardewValley.x", "/games/StardewValley.x86_64 "); // comm cut at 15 bytes
    addProcess(proc.path, 414, "StardewValley.x", "/games/StardewValley.xyz ");    // begins alike: another
    addProcess(proc.path, 415, "Web Content", "/usr/lib/firefox-esr/firefox-esr -contentproc "); // renamed
    addProcess(proc.path, 416, "gimp", "gimp picture.xcf ", "/usr/bin/gimp-2.10"); // started by a symlink
    addProcess(proc.path, 417, "darktable", "darktable ", "/usr/bin/darktable-4 (deleted)"); // updated since
    std::filesystem::create_directories(proc.path / "self");
    std::ofstream(proc.path / "self" / "comm") << "nicerd\n"; // not a pid
    std::filesystem::create_directories(proc.path / "999");   // ended between the listing and the read

    ProgramWatch watch(proc.path);
    CHECK(watch.running().empty()); // no names: nothing read
    watch.setNames({"gimp-2.10", "StardewValley.x86_64", "absent", "blender", "kthreadd", "firefox-esr",
                    "zombie-game", "darktable-4", "Web"});
    CHECK(watch.running() ==
          Names{"gimp-2.10", "StardewValley.x86_64", "blender", "firefox-esr", "darktable-4"});
    watch.setNames({"StardewValley.x86_32", "systemd", "gimp"});
    CHECK(watch.running() == Names{"systemd", "gimp"});

    ProgramWatch nowhere(proc.path / "absent");
    nowhere.setNames({"systemd"});
    CHECK(nowhere.running().empty());
}

TEST_CASE("the command line is not read where comm and the exe link settle a name",
          "[desktop][ProgramWatch]") {
    // Reading /proc/PID/cmdline takes the process's mmap_lock and waits while another holds it. Here that
    // read would wait for good: the command line is a FIFO that no one writes.
    nicer::test::TempDir proc("nicer-fake-proc");
    addProcess(proc.path, 500, "Web Content", "", "/usr/lib/firefox-esr/firefox-esr");
    const auto fifo = proc.path / "500" / "cmdline";
    std::filesystem::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    ProgramWatch watch(proc.path);
    watch.setNames({"absent", "firefox-esr", "Web"});
    auto scan = std::async(std::launch::async, [&] { return watch.running(); });
    if (scan.wait_for(30s) == std::future_status::timeout) {
        const nicer::UniqueFd writer(::open(fifo.c_str(), O_WRONLY | O_CLOEXEC)); // lets the read end
        FAIL("the scan read the command line, which the exe link had settled");
    }
    CHECK(scan.get() == Names{"firefox-esr"});
}

TEST_CASE("named programs are seen in the real /proc while they run, and not after",
          "[desktop][ProgramWatch]") {
    nicer::test::TempDir dir;
    const auto renderer = dir.path / "nicer-test-renderer"; // 19 bytes: its comm is cut at 15
    const auto game = dir.path / "nicer-tgame";             // started by a symlink of another name
    std::filesystem::copy_file("/bin/sleep", renderer);
    std::filesystem::copy_file("/bin/sleep", game);
    std::filesystem::create_symlink(game, dir.path / "nicer-start");
    ProgramWatch watch;
    watch.setNames({"nicer-test-absent", "nicer-tgame", "nicer-test-renderer"});
    CHECK(watch.running().empty());

    nicer::test::ChildProcess rendering(renderer);
    nicer::test::ChildProcess playing(dir.path / "nicer-start");
    // Until both have exec'd: a fork still has the test's names.
    CHECK(nicer::test::pollUntil(
        [&] {
            return watch.running() == Names{"nicer-tgame", "nicer-test-renderer"};
        },
        5s, 10ms));
    playing.stop();
    CHECK(watch.running() == Names{"nicer-test-renderer"});
    rendering.stop();
    CHECK(watch.running().empty());
}

TEST_CASE("a program name that cannot be one is refused with what to write instead",
          "[desktop][ProgramWatch]") {
    CHECK(validateProgramName("blender"));
    CHECK(validateProgramName("StardewValley.x86_64"));
    CHECK(validateProgramName(std::string(255, 'a')));
    CHECK_THAT(validateProgramName("").error().message, Catch::Contains("empty"));
    CHECK_THAT(validateProgramName("/usr/bin/blender").error().message,
               Catch::Contains("is a path") && Catch::Contains("(blender)"));
    CHECK_THAT(validateProgramName("blender --background").error().message,
               Catch::Contains("without its arguments"));
    CHECK_FALSE(validateProgramName("tab\there"));
    CHECK_FALSE(validateProgramName("bell\a"));
    CHECK_THAT(validateProgramName(std::string(256, 'a')).error().message, Catch::Contains("255"));
}
