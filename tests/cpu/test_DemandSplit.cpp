#include "cpu/DemandSplit.h"

#include <catch2/catch.hpp>

using nicer::cpu::CpuUsage;
using nicer::cpu::splitDemand;

namespace {

/// A period of a machine that had 2e9 ns of CPU (two CPUs for a second), @p idle of it idle.
CpuUsage period(double idle) {
    return CpuUsage{idle, 1.0 - idle, 2, 200};
}

constexpr double kMachineNSec = 2e9;

} // namespace

TEST_CASE("the busy time splits into the work, your programs and other users and services", "[DemandSplit]") {
    // 0.8 busy: the work 0.3, the user manager 0.5 in all (the work's 0.3 included), so 0.2 yours and 0.3
    // outside.
    const auto d = splitDemand(period(0.2), kMachineNSec, 600'000'000, 1'000'000'000);
    CHECK(d.split);
    CHECK(d.idle == Approx(0.2));
    CHECK(d.work == Approx(0.3));
    CHECK(d.inside == Approx(0.2));
    CHECK(d.outside == Approx(0.3));
    CHECK(d.idle + d.work + d.inside + d.outside == Approx(1.0));
}

TEST_CASE("without the user manager's CPU time the rest is all counted as yours", "[DemandSplit]") {
    const auto d = splitDemand(period(0.2), kMachineNSec, 600'000'000, std::nullopt);
    CHECK_FALSE(d.split);
    CHECK(d.work == Approx(0.3));
    CHECK(d.inside == Approx(0.5));
    CHECK(d.outside == 0.0);
}

TEST_CASE("counters read a moment apart from /proc/stat are held to what it allows", "[DemandSplit]") {
    SECTION("a user manager that seems to have used more than the busy time leaves nothing outside") {
        const auto d = splitDemand(period(0.5), kMachineNSec, 200'000'000, 1'300'000'000);
        CHECK(d.inside == Approx(0.4));
        CHECK(d.outside == 0.0);
        CHECK(d.idle + d.work + d.inside + d.outside == Approx(1.0));
    }
    SECTION("a user manager that seems to have used less than its work counts as the work alone") {
        const auto d = splitDemand(period(0.5), kMachineNSec, 600'000'000, 400'000'000);
        CHECK(d.work == Approx(0.3));
        CHECK(d.inside == 0.0);
        CHECK(d.outside == Approx(0.2));
    }
    SECTION("a work that seems to have used more than the busy time is held to it") {
        const auto d = splitDemand(period(0.5), kMachineNSec, 1'500'000'000, 1'500'000'000);
        CHECK(d.work == Approx(0.5));
        CHECK(d.inside == 0.0);
        CHECK(d.outside == 0.0);
    }
    SECTION("no machine time: no shares, rather than a division by zero") {
        const auto d = splitDemand(CpuUsage{}, 0.0, 100, 200);
        CHECK(d.work == 0.0);
        CHECK(d.outside == 0.0);
    }
}
