#include "fakes/FakeCgroupTree.h"
#include "kernel/SchedExt.h"

#include <catch2/catch.hpp>

using nicer::kernel::runningSchedExt;

TEST_CASE("a sched_ext scheduler is named while its state reads enabled") {
    nicer::test::FakeCgroupTree sysfs; // any scratch directory stands in for /sys/kernel/sched_ext
    CHECK_FALSE(runningSchedExt(sysfs.root() / "absent")); // a kernel without sched_ext

    sysfs.write("state", "disabled\n");
    sysfs.write("root/ops", "\n");
    CHECK_FALSE(runningSchedExt(sysfs.root()));

    sysfs.write("state", "enabled\n");
    sysfs.write("root/ops", "lavd_1.0.6_g1234_x86_64_unknown_linux_gnu\n");
    CHECK(runningSchedExt(sysfs.root()) == "lavd_1.0.6_g1234_x86_64_unknown_linux_gnu");

    sysfs.write("root/ops", "");
    CHECK(runningSchedExt(sysfs.root()) == "unknown");
}
