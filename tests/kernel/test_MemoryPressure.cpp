#include "Skip.h"
#include "TempDir.h"
#include "fakes/FakeCgroupTree.h"
#include "kernel/CgroupLayout.h"
#include "kernel/MemoryPressure.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nicer;
using kernel::cgroupsBeside;
using kernel::parsePressure;

TEST_CASE("a pressure file's totals are read from its some and full lines", "[MemoryPressure]") {
    const auto totals = parsePressure("some avg10=0.00 avg60=0.12 avg300=0.03 total=123456\n"
                                      "full avg10=0.00 avg60=0.00 avg300=0.00 total=789\n");
    REQUIRE(totals.ok());
    CHECK(totals->someUSec == 123456);
    CHECK(totals->fullUSec == 789);
    CHECK(parsePressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n")->fullUSec == 0);
    CHECK_THAT(parsePressure("full avg10=0.00 total=5\n").error().message, Catch::Contains("no 'some' line"));
    CHECK_THAT(parsePressure("some avg10=0.00\n").error().message, Catch::Contains("no total="));
}

TEST_CASE("the cgroups beside the work are the siblings of it and of each of its ancestors",
          "[MemoryPressure]") {
    const test::FakeCgroupTree tree;
    const std::string manager = "user.slice/user-1000.slice/user@1000.service";
    for (const auto* dir : {"init.scope", "system.slice/cron.service", "user.slice/user-1001.slice",
                            "user.slice/user-1000.slice/session-2.scope"}) {
        tree.write(std::string(dir) + "/memory.pressure", "");
    }
    for (const auto* dir : {"app.slice/nicer.slice/nicer-work-0.service", "app.slice/firefox.scope",
                            "session.slice", "init.scope"}) {
        tree.write(manager + "/" + dir + "/memory.pressure", "");
    }
    tree.write("cgroup.procs", ""); // a file of the root is not a cgroup
    const auto beside = cgroupsBeside(tree.root(), "/" + manager + "/app.slice/nicer.slice/");
    REQUIRE(beside.ok());
    CHECK(*beside == std::vector<std::string>{
                         "/init.scope",
                         "/system.slice",
                         "/user.slice/user-1000.slice/session-2.scope",
                         "/user.slice/user-1000.slice/user@1000.service/app.slice/firefox.scope",
                         "/user.slice/user-1000.slice/user@1000.service/init.scope",
                         "/user.slice/user-1000.slice/user@1000.service/session.slice",
                         "/user.slice/user-1001.slice",
                     });
    CHECK_FALSE(cgroupsBeside(tree.root(), "/").ok());
    CHECK_THAT(cgroupsBeside(tree.root(), "/gone.slice/nicer.slice").error().message,
               Catch::Contains("cannot list"));
}

TEST_CASE("a cgroup's count reads as a number and max as none, and a missing memory.reclaim says which "
          "kernel has it",
          "[MemoryPressure]") {
    const test::FakeCgroupTree tree;
    tree.write("work/memory.current", "123456\n");
    tree.write("work/memory.swap.max", "max\n");
    CHECK(kernel::readCgroupCount(tree.root() / "work/memory.current") == 123456U);
    CHECK_FALSE(kernel::readCgroupCount(tree.root() / "work/memory.swap.max"));
    CHECK_FALSE(kernel::readCgroupCount(tree.root() / "work/gone"));
    const auto missing = kernel::reclaimMemory(tree.root() / "work/memory.reclaim", 4096);
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(missing.error().message, Catch::Contains("5.19 and later"));
    tree.write("work/memory.reclaim", "");
    CHECK(kernel::reclaimMemory(tree.root() / "work/memory.reclaim", 4096).ok());
    CHECK(tree.read("work/memory.reclaim") == "4096");
}

TEST_CASE("a PSI trigger on a real cgroup fires when its tasks stall on memory", "[MemoryPressure][kernel]") {
    // The real kernel's PSI (this machine's: a cgroup v2 tree beside a v1 memory hierarchy; the guest's: pure
    // v2). A reader thrashes a file through a page cache held to 32 MiB (memory.max on v2, the v1 memory
    // controller's limit on a hybrid tree), so that it waits on memory.
    if (::geteuid() != 0) {
        NICER_SKIP("needs root to make cgroups");
    }
    const auto layout = kernel::CgroupLayout::detect();
    REQUIRE(layout.ok());
    if (!layout->unifiedRoot()) {
        NICER_SKIP("no cgroup v2 tree");
    }
    const auto name = "nicer-test-psi-" + std::to_string(::getpid());
    const auto unified = *layout->unifiedRoot() / name;
    std::filesystem::create_directory(unified);
    struct Cleanup {
        std::vector<std::filesystem::path> dirs;
        ~Cleanup() {
            for (const auto& dir : dirs) {
                ::rmdir(dir.c_str());
            }
        }
    } cleanup{{unified}};
    if (!std::filesystem::exists(unified / "memory.pressure")) {
        NICER_SKIP("this kernel keeps no pressure of a cgroup (PSI off)");
    }
    std::vector<std::filesystem::path> procs{unified / "cgroup.procs"};
    if (std::filesystem::exists(unified / "memory.max")) {
        std::ofstream(unified / "memory.max") << (32 << 20);
    } else if (std::filesystem::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
        const std::filesystem::path v1 = "/sys/fs/cgroup/memory/" + name;
        std::filesystem::create_directory(v1);
        cleanup.dirs.insert(cleanup.dirs.begin(), v1);
        std::ofstream(v1 / "memory.limit_in_bytes") << (32 << 20);
        procs.push_back(v1 / "cgroup.procs");
    } else {
        NICER_SKIP("no memory controller to hold the cgroup's page cache");
    }

    auto trigger = kernel::PressureTrigger::open(unified / "memory.pressure", 10'000, 2'000'000);
    REQUIRE(trigger.ok());
    const test::TempDir dir("nicer-psi");
    const auto file = dir.path / "big";
    {
        std::ofstream out(file, std::ios::binary);
        const std::string block(1 << 20, 'x');
        for (int i = 0; i < 128; ++i) {
            out << block;
        }
    }
    {
        // Out of the page cache, which charged its pages to this process's cgroup: the reader's reads then
        // charge them to its own, held to 32 MiB.
        const int fd = ::open(file.c_str(), O_RDONLY);
        REQUIRE(fd >= 0);
        ::fdatasync(fd);
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
    }
    const pid_t reader = ::fork();
    REQUIRE(reader >= 0);
    if (reader == 0) {
        for (const auto& p : procs) {
            std::ofstream(p) << ::getpid();
        }
        const std::string script = "for i in $(seq 40); do cat '" + file.string() + "' > /dev/null; done";
        ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    pollfd fd{.fd = trigger->fd(), .events = POLLPRI, .revents = 0};
    const int ready = ::poll(&fd, 1, 60'000);
    ::kill(reader, SIGKILL);
    ::waitpid(reader, nullptr, 0);
    CHECK(ready == 1);
    CHECK((fd.revents & POLLPRI) != 0);
    const auto totals = kernel::readPressure(unified / "memory.pressure");
    REQUIRE(totals.ok());
    CHECK(totals->someUSec >= 10'000);
}

TEST_CASE("the tightest limit the work shares is an ancestor's, never the work's own fence",
          "[MemoryPressure]") {
    const test::FakeCgroupTree tree;
    const std::string user = "user.slice/user-1000.slice";
    const std::string work = "/" + user + "/user@1000.service/nicer.slice";
    tree.write(work.substr(1) + "/memory.max", "100\n"); // the work's own fence: not shared
    tree.write(work.substr(1) + "/memory.current", "90\n");
    CHECK_FALSE(kernel::tightestSharedLimit(tree.root(), work));

    tree.write(user + "/user@1000.service/memory.max", "max\n");
    tree.write(user + "/user@1000.service/memory.high", "max\n");
    tree.write(user + "/user@1000.service/memory.current", "5000\n");
    CHECK_FALSE(kernel::tightestSharedLimit(tree.root(), work)); // no limit set

    tree.write(user + "/memory.max", "8000\n"); // an administrator's MemoryMax= on the user's slice
    tree.write(user + "/memory.current", "6000\n");
    tree.write(user + "/memory.stat", "anon 5000\ninactive_file 500\nactive_file 500\n");
    auto shared = kernel::tightestSharedLimit(tree.root(), work + "/");
    REQUIRE(shared);
    CHECK(shared->cgroup == "/" + user);
    CHECK(shared->limit == 8000);
    CHECK(shared->available == 2500); // 2000 free below the limit, and 500 of cache not used again

    tree.write("user.slice/memory.high", "7000\n"); // a wider limit with less left under it wins
    tree.write("user.slice/memory.current", "6900\n");
    shared = kernel::tightestSharedLimit(tree.root(), work);
    REQUIRE(shared);
    CHECK(shared->cgroup == "/user.slice");
    CHECK(shared->available == 100);

    tree.write("user.slice/memory.current", "7500\n"); // over memory.high: nothing left, not a wrap
    CHECK(kernel::tightestSharedLimit(tree.root(), work)->available == 0);
}
