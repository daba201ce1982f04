#include "TempDir.h"
#include "desktop/ProgramWatch.h"
#include "fakes/FakeCgroupTree.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace nicer::desktop;

namespace {

/// A process in a fake /proc: its comm and its command line (NUL-separated, as the kernel writes it).
void addProcess(const nicer::test::FakeCgroupTree& proc, int pid, const std::string& comm,
                std::string cmdline) {
    proc.write(std::to_string(pid) + "/comm", comm + "\n");
    std::replace(cmdline.begin(), cmdline.end(), ' ', '\0');
    proc.write(std::to_string(pid) + "/cmdline", cmdline);
}

} // namespace

TEST_CASE("named programs are found by their kernel name, and by their command where that name is cut short",
          "[desktop][ProgramWatch]") {
    nicer::test::FakeCgroupTree proc;
    addProcess(proc, 1, "systemd", "/sbin/init splash ");
    addProcess(proc, 2, "kthreadd", ""); // a kernel thread: no command line
    addProcess(proc, 412, "blender", "/opt/blender/blender --factory-startup ");
    addProcess(proc, 413, "StardewValley.x", "/games/StardewValley.x86_64 "); // comm cut at 15 bytes
    addProcess(proc, 414, "StardewValley.x", "/games/StardewValley.xyz ");    // begins alike, another program
    proc.write("self/comm", "nicerd\n");                                      // not a pid
    proc.write("999/cmdline", "gone ");                                       // ended mid-scan: no comm
    ProgramWatch watch(proc.root());
    CHECK(watch.running().empty()); // no names: nothing read
    watch.setNames({"gimp", "StardewValley.x86_64", "blender", "kthreadd"});
    CHECK(watch.running() == std::vector<std::string>{"StardewValley.x86_64", "blender", "kthreadd"});
    watch.setNames({"StardewValley.x86_32"});
    CHECK(watch.running().empty());
}

TEST_CASE("a named program is seen in the real /proc while it runs, and not after",
          "[desktop][ProgramWatch]") {
    nicer::test::TempDir dir;
    const auto program = dir.path / "nicer-test-renderer"; // 19 bytes: its comm is cut
    std::filesystem::copy_file("/bin/sleep", program);
    ProgramWatch watch;
    watch.setNames({"nicer-test-renderer", "nicer-test-absent"});
    CHECK(watch.running().empty());
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::execl(program.c_str(), program.c_str(), "30", nullptr);
        ::_exit(127);
    }
    REQUIRE(pid > 0);
    bool seen = false;
    for (int i = 0; i < 200 && !seen; ++i) { // until exec has happened
        seen = watch.running() == std::vector<std::string>{"nicer-test-renderer"};
        ::usleep(10'000);
    }
    CHECK(seen);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    CHECK(watch.running().empty());
}

TEST_CASE("a program name that cannot be one is refused with what to write instead",
          "[desktop][ProgramWatch]") {
    CHECK(validateProgramName("blender"));
    CHECK(validateProgramName("StardewValley.x86_64"));
    CHECK_THAT(validateProgramName("").error().message, Catch::Contains("empty"));
    CHECK_THAT(validateProgramName("/usr/bin/blender").error().message,
               Catch::Contains("is a path") && Catch::Contains("(blender)"));
    CHECK_THAT(validateProgramName("blender --background").error().message,
               Catch::Contains("without its arguments"));
    CHECK_FALSE(validateProgramName("tab\there"));
    CHECK_FALSE(validateProgramName(std::string(256, 'a')));
}
