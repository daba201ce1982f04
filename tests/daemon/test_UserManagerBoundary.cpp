#include "daemon/UserManagerBoundary.h"
#include "fakes/FakeCgroupTree.h"

#include <catch2/catch.hpp>

using nicer::daemon::CgroupBoundary;
using nicer::kernel::CgroupLayout;

namespace {

constexpr const char* kManager = "/user.slice/user-1000.slice/user@1000.service";

/// A pure v2 tree with the user manager and the work's two places, each with its CPU time and idle weight.
struct Tree {
    nicer::test::FakeCgroupTree sysfs;
    CgroupLayout layout;

    Tree()
        : layout(*CgroupLayout::parse(sysfs.mountLine("", "cgroup2", "rw"))) {
        cpu(kManager, 7'000, false);
        cpu(std::string(kManager) + "/nicer.slice", 5'000, true);
        cpu("/nicer.slice", 2'000, true);
        cpu("/nicer.slice/nicer-work@1000.service/work", 3'000, false);
    }
    void cpu(const std::string& cgroup, std::uint64_t usageUSec, bool idle) {
        sysfs.write(cgroup.substr(1) + "/cpu.stat", "usage_usec " + std::to_string(usageUSec) + "\n");
        sysfs.write(cgroup.substr(1) + "/cpu.idle", idle ? "1\n" : "0\n");
        sysfs.write(cgroup.substr(1) + "/cgroup.controllers", "cpu memory pids\n");
    }
};

} // namespace

TEST_CASE("in the user slice the manager's CPU time holds the work's, and the slice's own cpu.idle counts",
          "[UserManagerBoundary]") {
    Tree tree;
    CgroupBoundary boundary(tree.layout, kManager, std::string(kManager) + "/nicer.slice");
    CHECK(boundary.managerCpuNSec().value() == 7'000'000);
    CHECK(boundary.workYieldsToSiblings().value());
    CHECK_FALSE(boundary.workYieldsToEverything().value());
}

TEST_CASE("in the root idle slice the work's CPU time is counted in, and the top level's cpu.idle makes it "
          "yield to everything",
          "[UserManagerBoundary]") {
    Tree tree;
    CgroupBoundary boundary(tree.layout, kManager, "/nicer.slice/nicer-work@1000.service/work");
    // The split expects the manager's time with the work's in it: 7 ms + the leaf's 3 ms.
    CHECK(boundary.managerCpuNSec().value() == 10'000'000);
    // The leaf's own cpu.idle (0 here) does not matter: the slice at the root has 1.
    CHECK(boundary.workYieldsToSiblings().value());
    CHECK(boundary.workYieldsToEverything().value());

    tree.cpu("/nicer.slice", 2'000, false);
    CHECK_FALSE(boundary.workYieldsToEverything().value());
    CHECK_FALSE(boundary.workYieldsToSiblings().value());
}
