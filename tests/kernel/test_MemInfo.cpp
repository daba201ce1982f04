#include "fakes/FakeCgroupTree.h"
#include "kernel/MemInfo.h"

#include <catch2/catch.hpp>

using nicer::kernel::machineMemoryBytes;
using nicer::kernel::parseMemTotal;

TEST_CASE("the machine's memory comes from MemTotal, else from sysconf", "[MemInfo]") {
    CHECK(parseMemTotal("MemTotal:        4030452 kB\nMemFree:         1224316 kB\n").value() ==
          4030452ULL * 1024);
    CHECK(parseMemTotal("MemFree: 12 kB\nMemTotal: 8 kB").value() == 8 * 1024);
    CHECK_THAT(parseMemTotal("MemFree: 12 kB\n").error().message, Catch::Contains("no MemTotal"));
    CHECK_THAT(parseMemTotal("MemTotal: lots\n").error().message, Catch::Contains("'MemTotal: lots'"));

    const nicer::test::FakeCgroupTree tree;
    tree.write("meminfo", "MemTotal:        2000000 kB\n");
    CHECK(machineMemoryBytes(tree.root() / "meminfo").value() == 2'048'000'000ULL);
    tree.write("bad", "MemTotal: -1 kB\n");
    CHECK_THAT(machineMemoryBytes(tree.root() / "bad").error().message, Catch::Contains("bad"));
    // No such file: the machine's own count.
    const auto own = machineMemoryBytes(tree.root() / "missing");
    REQUIRE(own.ok());
    CHECK(*own > 0);
}
