#include "SliceTestSupport.h"
#include "actuator/SliceMemoryLimit.h"
#include "fakes/FakeCgroupTree.h"
#include "fakes/FakeUnitManager.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

using nicer::actuator::applyMemoryLimit;
using nicer::actuator::kNoMemoryLimit;
using nicer::actuator::memoryLimitFor;
using nicer::kernel::CgroupLayout;
using nicer::test::FakeUnitManager;
using nicer::test::kSlice;
using nicer::test::parseLayout;
using nicer::test::propertyValue;
using nicer::test::UnitCall;

namespace {

constexpr std::uint64_t kGiB = 1024ULL * 1024 * 1024;

/// Pure cgroup v2 where the user manager's cgroup (the slice's parent) has @p controllers.
CgroupLayout v2Layout(const nicer::test::FakeCgroupTree& tree, const std::string& controllers) {
    tree.write("v2/cgroup.controllers", controllers + "\n");
    tree.write("v2/nicer.slice/cgroup.procs", "");
    return parseLayout(tree.mountLine("v2", "cgroup2", "rw"));
}

/// The one setUnitProperties call that sent the memory limits (the other points the slice out to
/// systemd-oomd).
nicer::test::UnitCall limitsCall(const FakeUnitManager& units) {
    const auto sets = units.callsTo("setUnitProperties");
    REQUIRE(sets.size() == 2);
    CHECK(sets[0].unit == kSlice);
    CHECK(sets[1].unit == kSlice);
    CHECK(propertyValue<std::string>(sets[1].props, "ManagedOOMSwap") == "kill");
    return sets[0];
}

/// The MemoryHigh and MemoryMax values of the one setUnitProperties call that sent them.
std::pair<std::uint64_t, std::uint64_t> memorySent(const FakeUnitManager& units) {
    const auto call = limitsCall(units);
    const auto high = propertyValue<std::uint64_t>(call.props, "MemoryHigh");
    const auto max = propertyValue<std::uint64_t>(call.props, "MemoryMax");
    REQUIRE(high);
    REQUIRE(max);
    return {*high, *max};
}

} // namespace

TEST_CASE("the memory limit is the percentage of the machine's memory, MemoryHigh 90% of it",
          "[SliceMemoryLimit]") {
    const auto half = memoryLimitFor(8 * kGiB, 50);
    CHECK(half.percent == 50);
    CHECK(half.max == 4 * kGiB);
    CHECK(half.high == 3865470566); // 0.9 x 4 GiB, rounded
    CHECK_FALSE(half.none());

    const auto quarter = memoryLimitFor(16'000'000'000ULL, 25);
    CHECK(quarter.max == 4'000'000'000ULL);
    CHECK(quarter.high == 3'600'000'000ULL);

    // 100% (and "none", which reads as 100) is no limit: systemd's infinity for both.
    const auto none = memoryLimitFor(8 * kGiB, 100);
    CHECK(none.none());
    CHECK(none.max == kNoMemoryLimit);
    CHECK(none.high == kNoMemoryLimit);
}

TEST_CASE("the work may put the same share of the machine's swap as of its memory", "[SliceMemoryLimit]") {
    CHECK(memoryLimitFor(8 * kGiB, 50, 2 * kGiB).swapMax == kGiB);
    CHECK(memoryLimitFor(8 * kGiB, 25, 4 * kGiB).swapMax == kGiB);
    // No swap, or no limit: nothing to hold it to.
    CHECK(memoryLimitFor(8 * kGiB, 50, 0).swapMax == kNoMemoryLimit);
    CHECK(memoryLimitFor(8 * kGiB, 100, 2 * kGiB).swapMax == kNoMemoryLimit);

    const nicer::test::FakeCgroupTree tree;
    FakeUnitManager units;
    applyMemoryLimit(units, v2Layout(tree, "cpu memory pids"), kSlice, "/nicer.slice",
                     memoryLimitFor(8 * kGiB, 50, 2 * kGiB));
    CHECK(propertyValue<std::uint64_t>(limitsCall(units).props, "MemorySwapMax") == kGiB);
}

TEST_CASE("a systemd that knows no ManagedOOMSwap keeps the memory limit", "[SliceMemoryLimit]") {
    const nicer::test::FakeCgroupTree tree;
    FakeUnitManager units;
    units.fail("setUnitProperties", "Cannot set property ManagedOOMSwap, or unknown property.",
               [](const UnitCall& c) { return nicer::test::hasProperty(c.props, "ManagedOOMSwap"); });
    const auto outcome = applyMemoryLimit(units, v2Layout(tree, "cpu memory pids"), kSlice, "/nicer.slice",
                                          memoryLimitFor(4 * kGiB, 50));
    CHECK(outcome.maxInForce == 2 * kGiB);
    CHECK(outcome.note.empty());
}

TEST_CASE("the slice gets MemoryHigh and MemoryMax for the machine's memory and the percentage",
          "[SliceMemoryLimit]") {
    const nicer::test::FakeCgroupTree tree;
    FakeUnitManager units;
    const auto limit = memoryLimitFor(4 * kGiB, 50);
    const auto outcome =
        applyMemoryLimit(units, v2Layout(tree, "cpuset cpu io memory pids"), kSlice, "/nicer.slice", limit);
    const auto [high, max] = memorySent(units);
    CHECK(max == 2 * kGiB);
    CHECK(high == 1932735283); // 0.9 x 2 GiB, rounded
    CHECK(outcome.maxInForce == 2 * kGiB);
    CHECK(outcome.note.empty());
}

TEST_CASE("without a limit, the slice gets infinity, which lifts one an earlier run left",
          "[SliceMemoryLimit]") {
    const nicer::test::FakeCgroupTree tree;
    FakeUnitManager units;
    const auto outcome = applyMemoryLimit(units, v2Layout(tree, "cpu memory pids"), kSlice, "/nicer.slice",
                                          memoryLimitFor(4 * kGiB, 100));
    const auto [high, max] = memorySent(units);
    CHECK(high == kNoMemoryLimit);
    CHECK(max == kNoMemoryLimit);
    CHECK(outcome.maxInForce == kNoMemoryLimit);
    CHECK(outcome.note.empty());

    SECTION("and an older systemd that refuses it has nothing to say") {
        FakeUnitManager old;
        old.fail("setUnitProperties", "Cannot set property MemoryMax, or unknown property.");
        const auto refused = applyMemoryLimit(old, v2Layout(tree, "cpu pids"), kSlice, "/nicer.slice",
                                              memoryLimitFor(4 * kGiB, 100));
        CHECK(refused.note.empty());
        CHECK(refused.maxInForce == kNoMemoryLimit);
    }
}

TEST_CASE("a memory limit systemd refuses leaves the work without one, and the note says why",
          "[SliceMemoryLimit]") {
    const nicer::test::FakeCgroupTree tree;
    FakeUnitManager units;
    units.fail("setUnitProperties", "Cannot set property MemoryHigh, or unknown property.",
               [](const UnitCall& c) { return nicer::test::hasProperty(c.props, "MemoryHigh"); });
    const auto outcome = applyMemoryLimit(units, v2Layout(tree, "cpu memory pids"), kSlice, "/nicer.slice",
                                          memoryLimitFor(4 * kGiB, 50));
    CHECK(units.callsTo("setUnitProperties").size() == 2); // the limits once, nothing else to try; then oomd
    CHECK(outcome.maxInForce == kNoMemoryLimit);
    CHECK_THAT(outcome.note, Catch::Contains("systemd refused the memory limit") &&
                                 Catch::Contains("50% of the machine's memory, 2.0 GiB") &&
                                 Catch::Contains("Cannot set property MemoryHigh") &&
                                 Catch::Contains("runs without one") && Catch::Contains("systemd-oomd"));
}

TEST_CASE("a memory limit the kernel would not enforce says that memory is not delegated, and the fix",
          "[SliceMemoryLimit]") {
    const nicer::test::FakeCgroupTree tree;
    FakeUnitManager units;
    const auto outcome = applyMemoryLimit(units, v2Layout(tree, "cpu pids"), kSlice, "/nicer.slice",
                                          memoryLimitFor(8 * kGiB, 25));
    memorySent(units); // systemd takes it all the same
    CHECK(outcome.maxInForce == kNoMemoryLimit);
    CHECK_THAT(outcome.note, Catch::Contains("does not delegate the memory controller") &&
                                 Catch::Contains("25% of the machine's memory, 2.0 GiB") &&
                                 Catch::Contains("Delegate=pids memory cpu"));
}

TEST_CASE("with a v1 memory hierarchy, the limit holds where this user may create cgroups in it",
          "[SliceMemoryLimit]") {
    const nicer::test::FakeCgroupTree tree;
    tree.write("memory/user/memory.limit_in_bytes", "9223372036854771712\n");
    tree.write("unified/user/nicer.slice/cgroup.procs", "");
    const auto layout = parseLayout(tree.mountLine("memory", "cgroup", "rw,memory") +
                                    tree.mountLine("unified", "cgroup2", "rw"));
    FakeUnitManager units;
    const auto limit = memoryLimitFor(8 * kGiB, 50);
    CHECK(applyMemoryLimit(units, layout, kSlice, "/user/nicer.slice", limit).maxInForce == 4 * kGiB);
    // The manager's cgroup is not in the memory hierarchy: not delegated.
    CHECK_THAT(applyMemoryLimit(units, layout, kSlice, "/other/nicer.slice", limit).note,
               Catch::Contains("does not delegate the memory controller"));
}

TEST_CASE("a profile's memory share sets MemoryHigh, never above the fence's", "[SliceMemoryLimit]") {
    const auto fence = memoryLimitFor(8 * kGiB, 50); // MemoryHigh 3.6 GiB
    CHECK(memoryHighFor(8 * kGiB, fence, 0.25) == 2 * kGiB);
    CHECK(memoryHighFor(8 * kGiB, fence, 0.45) == fence.high);
    CHECK(memoryHighFor(8 * kGiB, fence, 0.8) == fence.high); // the fence holds over the profile
    CHECK(memoryHighFor(8 * kGiB, fence, 1.0) == fence.high);
    // memory-max none: the profile's share alone, and no limit at all for 1.
    const MemoryLimit none;
    CHECK(memoryHighFor(8 * kGiB, none, 0.25) == 2 * kGiB);
    CHECK(memoryHighFor(8 * kGiB, none, 1.0) == kNoMemoryLimit);
    // The machine's size not known: the fence's, which is none then.
    CHECK(memoryHighFor(0, none, 0.25) == kNoMemoryLimit);
}
