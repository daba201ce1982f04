#include "cpu/CpuUsage.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

using namespace nicer::cpu;
using nicer::kernel::CpuTimes;
using nicer::kernel::ProcStatSnapshot;
using nicer::kernel::readProcStat;

namespace {

ProcStatSnapshot load(const std::string& name) {
    auto snap = readProcStat(std::string(NICER_TEST_DATA) + "/procstat/" + name);
    REQUIRE(snap.ok());
    return *snap;
}

} // namespace

TEST_CASE("idle fraction is (idle + iowait) over all ticks of the period", "[usage]") {
    // Per CPU over 100 ticks each: cpu0 30 idle (incl. 5 iowait), cpu1 85, cpu2 0, cpu3 100 (incl. 10
    // iowait). cpu0 also ran 20 ticks of guest, already inside its user time: counting it again would give
    // 215/420.
    const auto usage = usageBetween(load("four-cpus-t0.txt"), load("four-cpus-t1.txt"));
    CHECK(usage.totalTicks == 400);
    CHECK(usage.idle == Approx(215.0 / 400.0));
    CHECK(usage.busy == Approx(185.0 / 400.0));
    CHECK(usage.cpuCount == 4);
}

TEST_CASE("a counter going backwards counts as zero instead of wrapping", "[usage]") {
    // cpu1's iowait fell from 25 to 20: unclamped it would give 210/395, wrapped it would be nonsense.
    const auto usage = usageBetween(load("four-cpus-t0.txt"), load("backwards-t1.txt"));
    CHECK(usage.totalTicks == 400);
    CHECK(usage.idle == Approx(215.0 / 400.0));
}

TEST_CASE("counters that jump by more than 64 bits can sum keep the idle share within 0..1", "[usage]") {
    // Found with tests/fuzz/fuzz_ProcStat's invariant: the sum of the deltas wrapped around, so the total
    // fell below the idle ticks and the idle share came out far above 1.
    ProcStatSnapshot before;
    before.perCpu[0] = CpuTimes{};
    ProcStatSnapshot after;
    after.perCpu[0] = CpuTimes{.user = 9223372036854775808u, .idle = 9223372036854775809u};
    const auto usage = usageBetween(before, after);
    CHECK(usage.totalTicks == UINT64_MAX);
    CHECK(usage.idle >= 0.0);
    CHECK(usage.idle <= 1.0);
    CHECK(usage.busy == 1.0 - usage.idle);
}

TEST_CASE("a CPU going offline between two reads adds nothing to that period", "[usage]") {
    // cpu2's line is gone: only cpu0, cpu1 and cpu3 (300 ticks, 215 idle) count.
    const auto usage = usageBetween(load("four-cpus-t0.txt"), load("hotplug-cpu2-offline-t1.txt"));
    CHECK(usage.totalTicks == 300);
    CHECK(usage.idle == Approx(215.0 / 300.0));
    CHECK(usage.cpuCount == 3);
}

TEST_CASE("a CPU coming back online with restarted counters adds nothing until it has two reads", "[usage]") {
    // cpu2 is back (counters from zero), cpu1 went away: only cpu0 (90 ticks, 75 idle) and cpu3 (100, 70)
    // count.
    const auto usage = usageBetween(load("hotplug-cpu2-offline-t1.txt"), load("hotplug-cpu2-online-t2.txt"));
    CHECK(usage.totalTicks == 190);
    CHECK(usage.idle == Approx(145.0 / 190.0));
    CHECK(usage.cpuCount == 3);
}

TEST_CASE("without per-CPU lines the aggregate line is used", "[usage]") {
    ProcStatSnapshot a;
    ProcStatSnapshot b;
    a.aggregate = CpuTimes{100, 0, 0, 100, 0, 0, 0, 0, 0, 0};
    b.aggregate = CpuTimes{130, 0, 10, 150, 10, 0, 0, 0, 0, 0};
    const auto usage = usageBetween(a, b);
    CHECK(usage.totalTicks == 100);
    CHECK(usage.idle == Approx(0.6));
    CHECK(usage.cpuCount == 1);
}

TEST_CASE("no elapsed tick gives totalTicks == 0", "[usage]") {
    const auto snap = load("four-cpus-t0.txt");
    const auto usage = usageBetween(snap, snap);
    CHECK(usage.totalTicks == 0);
}
