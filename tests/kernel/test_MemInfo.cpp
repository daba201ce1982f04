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

TEST_CASE("the memory rule's figures: MemTotal, MemAvailable and SwapTotal, or what is missing",
          "[MemInfo]") {
    const nicer::test::FakeCgroupTree tree;
    tree.write("meminfo", "MemTotal:        2000000 kB\nMemFree:  100 kB\nMemAvailable:     500000 kB\n"
                          "SwapCached: 0 kB\nSwapTotal:       1000000 kB\n");
    const auto figures = nicer::kernel::readMemoryFigures(tree.root() / "meminfo");
    REQUIRE(figures.ok());
    CHECK(figures->total == 2'048'000'000ULL);
    CHECK(figures->available == 512'000'000ULL);
    CHECK(figures->swap == 1'024'000'000ULL);
    CHECK(nicer::kernel::swapBytes(tree.root() / "meminfo").value() == 1'024'000'000ULL);
    // A kernel before 3.14 has no MemAvailable: said, with the file.
    tree.write("old", "MemTotal: 2000000 kB\nSwapTotal: 0 kB\n");
    const auto old = nicer::kernel::readMemoryFigures(tree.root() / "old");
    REQUIRE_FALSE(old.ok());
    CHECK_THAT(old.error().message, Catch::Contains("old") && Catch::Contains("no MemAvailable"));
}
