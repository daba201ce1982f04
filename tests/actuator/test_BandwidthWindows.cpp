// Where nicerd puts its quota changes: the window for a period, and the start of the kernel's windows found
// from readings of its window count.
#include "actuator/BandwidthWindows.h"

#include <catch2/catch.hpp>

using namespace nicer::actuator;
using namespace std::chrono_literals;
using us = std::chrono::microseconds;

TEST_CASE("the window is the period up to 1 s, a whole fraction of a longer one", "[BandwidthWindows]") {
    CHECK(windowForPeriod(10ms) == 10ms);
    CHECK(windowForPeriod(250ms) == 250ms);
    CHECK(windowForPeriod(1s) == 1s);
    CHECK(windowForPeriod(1500ms) == 750ms);
    CHECK(windowForPeriod(2s) == 1s);
    CHECK(windowForPeriod(10s) == 1s);
    CHECK(windowForPeriod(us(3'333'333)) == us(833'333));
    for (const us period :
         {us(10'000), us(999'999), us(1'000'001), us(3'333'333), us(7'654'321), us(10'000'000)}) {
        CAPTURE(period.count());
        const us window = windowForPeriod(period);
        CHECK(window <= 1s);
        const auto windows = (period + window / 2) / window;
        CHECK((windows == 1 || period / (windows - 1) > 1s)); // the fewest windows: one fewer would be > 1 s
        CHECK(periodStartsWindows(period, window));
    }
}

TEST_CASE("a period starts windows only when it is a whole number of them", "[BandwidthWindows]") {
    CHECK(periodStartsWindows(1s, 100ms));
    CHECK(periodStartsWindows(2s, 1s));
    CHECK(periodStartsWindows(1s, 1s));
    CHECK_FALSE(periodStartsWindows(1s, 300ms));
    CHECK_FALSE(periodStartsWindows(250ms, 1s)); // shorter than a window: some ticks land inside one
    CHECK_FALSE(periodStartsWindows(1500ms, 1s));
    CHECK_FALSE(periodStartsWindows(1s, 0ms));
}

TEST_CASE("the probe finds a window start from the first reading with a new count", "[BandwidthWindows]") {
    WindowStartProbe probe;
    CHECK_FALSE(probe.observe(us(1'000'000), 41));
    CHECK_FALSE(probe.observe(us(1'004'000), 41));
    CHECK_FALSE(probe.windowStart());
    CHECK(probe.observe(us(1'008'000), 42)); // a window started in (1.004, 1.008]
    REQUIRE(probe.windowStart());
    CHECK(*probe.windowStart() == us(1'008'000));

    // The first reading has nothing to compare with, and a count that moves with no time passed proves
    // nothing.
    WindowStartProbe first;
    CHECK_FALSE(first.observe(us(5), 7));
    CHECK_FALSE(first.observe(us(5), 8));
    CHECK(first.observe(us(9), 9));
    CHECK(*first.windowStart() == us(9));
}

TEST_CASE("the window start nearest to a time, on either side", "[BandwidthWindows]") {
    const us known(1'003'000), window(1'000'000);
    CHECK(nearestWindowStart(known, window, us(5'100'000)) == us(5'003'000));
    CHECK(nearestWindowStart(known, window, us(4'900'000)) == us(5'003'000));
    CHECK(nearestWindowStart(known, window, us(5'003'000)) == us(5'003'000));
    CHECK(nearestWindowStart(known, window, us(400'000)) == us(3'000)); // before the known start
    CHECK(nearestWindowStart(known, window, us(600'000)) == us(1'003'000));
}
