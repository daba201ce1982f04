#include "fakes/FakeCgroupTree.h"
#include "kernel/CgroupLayout.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

using nicer::kernel::CgroupLayout;
namespace fs = std::filesystem;

namespace {

std::string readFixture(const std::string& name) {
    std::ifstream in(std::string(NICER_TEST_DATA) + "/mountinfo/" + name);
    REQUIRE(in.good());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

CgroupLayout parseFixture(const std::string& name) {
    auto layout = CgroupLayout::parse(readFixture(name));
    INFO((layout ? std::string() : layout.error().message));
    REQUIRE(layout.ok());
    return *layout;
}

using TempTree = nicer::test::FakeCgroupTree;

CgroupLayout parseText(const std::string& text) {
    auto layout = CgroupLayout::parse(text);
    INFO((layout ? std::string() : layout.error().message));
    REQUIRE(layout.ok());
    return *layout;
}

} // namespace

TEST_CASE("CgroupLayout parses the hybrid layout of the CI machines", "[CgroupLayout]") {
    const auto layout = parseFixture("hybrid-debian12-ci.txt");
    CHECK(layout.unifiedRoot() == fs::path("/sys/fs/cgroup/unified"));
    CHECK(layout.cpuRoot() == fs::path("/sys/fs/cgroup/cpu"));
    CHECK(layout.cpuacctRoot() == fs::path("/sys/fs/cgroup/cpuacct"));
    CHECK(layout.freezerRoot() == fs::path("/sys/fs/cgroup/freezer"));
    CHECK_FALSE(layout.cpuOnUnified());
}

TEST_CASE("CgroupLayout parses a pure cgroup v2 layout", "[CgroupLayout]") {
    const auto layout = parseFixture("pure-v2.txt");
    CHECK(layout.unifiedRoot() == fs::path("/sys/fs/cgroup"));
    CHECK_FALSE(layout.cpuRoot());
    CHECK_FALSE(layout.cpuacctRoot());
    CHECK_FALSE(layout.freezerRoot());
    CHECK(layout.cpuOnUnified());
}

TEST_CASE("CgroupLayout parses pure v1 with cpu and cpuacct co-mounted", "[CgroupLayout]") {
    const auto layout = parseFixture("pure-v1-cpu-cpuacct.txt");
    CHECK_FALSE(layout.unifiedRoot());
    CHECK(layout.cpuRoot() == fs::path("/sys/fs/cgroup/cpu,cpuacct"));
    CHECK(layout.cpuacctRoot() == fs::path("/sys/fs/cgroup/cpu,cpuacct"));
    CHECK(layout.freezerRoot() == fs::path("/sys/fs/cgroup/freezer"));
    CHECK_FALSE(layout.cpuOnUnified());
}

TEST_CASE("CgroupLayout says so when no cgroup is mounted", "[CgroupLayout]") {
    const auto layout = CgroupLayout::parse(readFixture("broken-no-cgroup.txt"));
    REQUIRE_FALSE(layout.ok());
    CHECK_THAT(layout.error().message, Catch::Contains("no cgroup file system is mounted"));
    CHECK_THAT(layout.error().message, Catch::Contains("cgroup2"));
}

TEST_CASE("CgroupLayout rejects a line that is not mountinfo", "[CgroupLayout]") {
    const auto layout = CgroupLayout::parse("41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
                                            "this is not mountinfo\n");
    REQUIRE_FALSE(layout.ok());
    CHECK_THAT(layout.error().message, Catch::Contains("line 2"));
}

TEST_CASE("CgroupLayout unescapes mount points and skips optional fields", "[CgroupLayout]") {
    const auto layout =
        parseText("41 31 0:38 / /mnt/my\\040cgroups\\134x rw shared:4 master:1 - cgroup2 cgroup2 rw\n");
    CHECK(layout.unifiedRoot() == fs::path("/mnt/my cgroups\\x"));
}

TEST_CASE("CgroupLayout detects the running machine", "[CgroupLayout]") {
    const auto layout = CgroupLayout::detect();
    INFO((layout ? std::string() : layout.error().message));
    REQUIRE(layout.ok());
    CHECK((layout->unifiedRoot() || layout->cpuRoot()));
}

TEST_CASE("CgroupLayout reads a cgroup v2 tree", "[CgroupLayout]") {
    const TempTree tree;
    const auto layout = parseText(tree.mountLine("v2", "cgroup2", "rw,nsdelegate"));
    REQUIRE(layout.cpuOnUnified());

    SECTION("cpu.max in µs per second") {
        REQUIRE(layout.cpuQuotaFile("/nicer.slice") == std::nullopt);
        const auto missing = layout.readCpuQuotaPerSecUSec("/nicer.slice");
        REQUIRE_FALSE(missing.ok());
        CHECK_THAT(missing.error().message, Catch::Contains("nicer.slice/cpu.max"));

        tree.write("v2/nicer.slice/cpu.max", "max 100000\n");
        CHECK(layout.cpuQuotaFile("/nicer.slice") == tree.root() / "v2/nicer.slice/cpu.max");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == UINT64_MAX);
        tree.write("v2/nicer.slice/cpu.max", "50000 100000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == 500'000);
        tree.write("v2/nicer.slice/cpu.max", "25000 50000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("nicer.slice") == 500'000);
        tree.write("v2/nicer.slice/cpu.max", "150000 100000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == 1'500'000);
        tree.write("v2/nicer.slice/cpu.max", "1000 3000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == 333'333);

        tree.write("v2/nicer.slice/cpu.max", "lots 100000\n");
        const auto bad = layout.readCpuQuotaPerSecUSec("/nicer.slice");
        REQUIRE_FALSE(bad.ok());
        CHECK_THAT(bad.error().message, Catch::Contains("cpu.max") && Catch::Contains("lots"));
        tree.write("v2/nicer.slice/cpu.max", "max 0\n");
        CHECK_FALSE(layout.readCpuQuotaPerSecUSec("/nicer.slice").ok());
    }

    SECTION("cpu.max: a quota beyond what 64 bits count is no limit, and a period beyond 1 s no kernel's") {
        // Found by tests/fuzz/fuzz_CgroupFiles: quota/period x 10^6 wrapped around to a small limit.
        tree.write("v2/nicer.slice/cpu.max", "18446744073709551615 1\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == UINT64_MAX);
        tree.write("v2/nicer.slice/cpu.max", "18446744073709 1000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == 18'446'744'073'709'000);
        tree.write("v2/nicer.slice/cpu.max", "18446744073709551000 1000000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == 18'446'744'073'709'551'000u);
        tree.write("v2/nicer.slice/cpu.max", "18446744073709551615 1000000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == UINT64_MAX);
        tree.write("v2/nicer.slice/cpu.max", "1000 1000000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == 1000);
        tree.write("v2/nicer.slice/cpu.max", "99999999999999999 100000000000000000\n");
        const auto period = layout.readCpuQuotaPerSecUSec("/nicer.slice");
        REQUIRE_FALSE(period.ok());
        CHECK_THAT(period.error().message, Catch::Contains("period of at most 1 s"));
    }

    SECTION("cpu.stat usage_usec in ns") {
        tree.write("v2/nicer.slice/cpu.stat", "usage_usec 12345\nuser_usec 10000\nsystem_usec 2345\n");
        CHECK(*layout.readCpuUsageNSec("/nicer.slice") == 12'345'000);
        tree.write("v2/nicer.slice/cpu.stat", "user_usec 10000\n");
        CHECK_FALSE(layout.readCpuUsageNSec("/nicer.slice").ok());
        // fuzz_CgroupFiles: a usage beyond 64 bits of ns wrapped around to a small one.
        tree.write("v2/nicer.slice/cpu.stat", "usage_usec 18446744073709551\n");
        CHECK(*layout.readCpuUsageNSec("/nicer.slice") == 18'446'744'073'709'551'000u);
        tree.write("v2/nicer.slice/cpu.stat", "usage_usec 18446744073709552\n");
        const auto huge = layout.readCpuUsageNSec("/nicer.slice");
        REQUIRE_FALSE(huge.ok());
        CHECK_THAT(huge.error().message, Catch::Contains("out of range"));
        const auto missing = layout.readCpuUsageNSec("/gone.slice");
        REQUIRE_FALSE(missing.ok());
        CHECK_THAT(missing.error().message, Catch::Contains("/gone.slice"));
    }

    SECTION("cpu.idle: whether the cgroup yields to its siblings") {
        CHECK(*layout.readCpuIdle("/nicer.slice") == false); // no file: systemd before 252, an old kernel
        tree.write("v2/nicer.slice/cpu.idle", "1\n");
        CHECK(*layout.readCpuIdle("/nicer.slice") == true);
        tree.write("v2/nicer.slice/cpu.idle", "0\n");
        CHECK(*layout.readCpuIdle("/nicer.slice") == false);
        tree.write("v2/nicer.slice/cpu.idle", "yes\n");
        const auto bad = layout.readCpuIdle("/nicer.slice");
        REQUIRE_FALSE(bad.ok());
        CHECK_THAT(bad.error().message, Catch::Contains("cpu.idle") && Catch::Contains("expected 0 or 1"));
    }

    SECTION("cpu.stat nr_periods: the bandwidth windows started") {
        tree.write("v2/nicer.slice/cpu.stat", "usage_usec 12345\nnr_periods 42\nnr_throttled 3\n");
        CHECK(*layout.readBandwidthWindows("/nicer.slice") == 42);
        tree.write("v2/nicer.slice/cpu.stat", "usage_usec 12345\n"); // no cpu controller for it
        const auto none = layout.readBandwidthWindows("/nicer.slice");
        REQUIRE_FALSE(none.ok());
        CHECK_THAT(none.error().message, Catch::Contains("nr_periods"));
        tree.write("v2/nicer.slice/cpu.stat", "nr_periods many\n");
        CHECK_FALSE(layout.readBandwidthWindows("/nicer.slice").ok());
        CHECK_THAT(layout.readBandwidthWindows("/gone.slice").error().message,
                   Catch::Contains("/gone.slice"));
    }

    SECTION("cgroup.freeze") {
        CHECK_FALSE(layout.freezeFile("/nicer.slice"));
        const auto missing = layout.setFrozen("/nicer.slice", true);
        REQUIRE_FALSE(missing.ok());
        CHECK_THAT(missing.error().message, Catch::Contains("cgroup.freeze"));

        tree.write("v2/nicer.slice/cgroup.freeze", "0\n");
        REQUIRE(layout.freezeFile("/nicer.slice"));
        REQUIRE(layout.setFrozen("/nicer.slice", true).ok());
        CHECK(tree.read("v2/nicer.slice/cgroup.freeze") == "1\n");
        REQUIRE(layout.setFrozen("/nicer.slice", false).ok());
        CHECK(tree.read("v2/nicer.slice/cgroup.freeze") == "0\n");
    }

    SECTION("cgroup.procs of a subtree") {
        tree.write("v2/nicer.slice/cgroup.procs", "");
        tree.write("v2/nicer.slice/a.service/cgroup.procs", "10\n11\n");
        tree.write("v2/nicer.slice/a.service/sub/cgroup.procs", "12\n");
        tree.write("v2/nicer.slice/a.service/sub/deeper/cgroup.procs", "");
        tree.write("v2/nicer.slice/b.service/cgroup.procs", "13\n");
        tree.write("v2/other.slice/cgroup.procs", "99\n");
        const auto pids = layout.readPids("/nicer.slice");
        INFO((pids ? std::string() : pids.error().message));
        REQUIRE(pids.ok());
        CHECK(*pids == std::vector<pid_t>{10, 11, 12, 13});

        tree.write("v2/nicer.slice/b.service/cgroup.procs", "13\nfourteen\n");
        const auto bad = layout.readPids("/nicer.slice");
        REQUIRE_FALSE(bad.ok());
        CHECK_THAT(bad.error().message,
                   Catch::Contains("b.service/cgroup.procs") && Catch::Contains("fourteen"));

        CHECK_FALSE(layout.readPids("/gone.slice").ok());
    }
}

TEST_CASE("CgroupLayout reads cgroup v1 files, with the v2 tree for usage on hybrid", "[CgroupLayout]") {
    const TempTree tree;

    SECTION("pure v1, cpu and cpuacct co-mounted") {
        const auto layout = parseText(tree.mountLine("cpu,cpuacct", "cgroup", "rw,cpu,cpuacct") +
                                      tree.mountLine("systemd", "cgroup", "rw,xattr,name=systemd"));
        REQUIRE_FALSE(layout.cpuOnUnified());

        tree.write("cpu,cpuacct/nicer.slice/cpu.cfs_quota_us", "-1\n");
        tree.write("cpu,cpuacct/nicer.slice/cpu.cfs_period_us", "100000\n");
        CHECK(layout.cpuQuotaFile("/nicer.slice") ==
              tree.root() / "cpu,cpuacct/nicer.slice/cpu.cfs_quota_us");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == UINT64_MAX);
        tree.write("cpu,cpuacct/nicer.slice/cpu.cfs_quota_us", "20000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == 200'000);
        tree.write("cpu,cpuacct/nicer.slice/cpu.cfs_period_us", "50000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == 400'000);
        tree.write("cpu,cpuacct/nicer.slice/cpu.cfs_quota_us", "-5\n");
        CHECK_FALSE(layout.readCpuQuotaPerSecUSec("/nicer.slice").ok());
        // A quota too large to count per second is none; a period beyond 1 s is refused (fuzz_CgroupFiles).
        tree.write("cpu,cpuacct/nicer.slice/cpu.cfs_quota_us", "9223372036854775807\n");
        tree.write("cpu,cpuacct/nicer.slice/cpu.cfs_period_us", "1000\n");
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == UINT64_MAX);
        tree.write("cpu,cpuacct/nicer.slice/cpu.cfs_period_us", "1000001\n");
        CHECK_FALSE(layout.readCpuQuotaPerSecUSec("/nicer.slice").ok());
        tree.write("cpu,cpuacct/nicer.slice/cpu.cfs_period_us", "50000\n");

        tree.write("cpu,cpuacct/nicer.slice/cpuacct.usage", "987654321\n");
        CHECK(*layout.readCpuUsageNSec("/nicer.slice") == 987'654'321);

        CHECK_FALSE(layout.freezeFile("/nicer.slice"));
        CHECK_FALSE(layout.setFrozen("/nicer.slice", true).ok());

        tree.write("systemd/nicer.slice/cgroup.procs", "7\n");
        tree.write("systemd/nicer.slice/w.service/cgroup.procs", "8\n8\n");
        const auto pids = layout.readPids("/nicer.slice");
        REQUIRE(pids.ok());
        CHECK(*pids == std::vector<pid_t>{7, 8});
    }

    SECTION("hybrid: quota on v1, usage and freezing on the unified tree") {
        const auto layout = parseText(tree.mountLine("cpu", "cgroup", "rw,cpu") +
                                      tree.mountLine("cpuacct", "cgroup", "rw,cpuacct") +
                                      tree.mountLine("unified", "cgroup2", "rw"));
        REQUIRE_FALSE(layout.cpuOnUnified());
        tree.write("cpu/nicer.slice/cpu.cfs_quota_us", "60000\n");
        tree.write("cpu/nicer.slice/cpu.cfs_period_us", "100000\n");
        tree.write("unified/nicer.slice/cpu.max", "max 100000\n"); // not the controlling file on hybrid
        tree.write("unified/nicer.slice/cpu.stat", "usage_usec 5\n");
        // cpu.idle is the v1 cpu hierarchy's (written by hand there; systemd writes cpu.shares instead).
        tree.write("unified/nicer.slice/cpu.idle", "1\n");
        CHECK(*layout.readCpuIdle("/nicer.slice") == false);
        tree.write("cpu/nicer.slice/cpu.idle", "1\n");
        CHECK(*layout.readCpuIdle("/nicer.slice") == true);
        tree.write("cpuacct/nicer.slice/cpuacct.usage", "1\n");
        tree.write("unified/nicer.slice/cgroup.freeze", "0\n");
        tree.write("cpu/nicer.slice/cpu.stat", "nr_periods 7\nnr_throttled 1\nthrottled_time 5\n");
        CHECK(*layout.readBandwidthWindows("/nicer.slice") == 7); // the v1 cpu hierarchy's, not the unified
        CHECK(*layout.readCpuQuotaPerSecUSec("/nicer.slice") == 600'000);
        CHECK(*layout.readCpuUsageNSec("/nicer.slice") == 5000);
        CHECK(layout.freezeFile("/nicer.slice") == tree.root() / "unified/nicer.slice/cgroup.freeze");
    }
}
