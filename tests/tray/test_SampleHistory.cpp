#include "tray/SampleHistory.h"

#include <catch2/catch.hpp>

#include <vector>

using nicer::api::Sample;
using nicer::tray::SampleHistory;

namespace {

Sample at(std::uint64_t seconds, double multiplier = 1.0) {
    Sample s;
    s.timeUSec = seconds * 1'000'000;
    s.multiplier = multiplier;
    return s;
}

} // namespace

TEST_CASE("the history keeps the last span of samples, oldest first", "[tray]") {
    SampleHistory h(std::chrono::seconds(10));
    for (std::uint64_t t = 100; t <= 120; ++t) {
        h.append(at(t), 0.05);
    }
    REQUIRE(h.points().size() == 11);
    CHECK(h.points().front().sample.timeUSec == 110'000'000);
    CHECK(h.points().back().sample.timeUSec == 120'000'000);
}

TEST_CASE("reset replaces the history and a stale sample is dropped", "[tray]") {
    SampleHistory h(std::chrono::seconds(60));
    h.append(at(5), 0.05);
    const std::vector<Sample> fresh{at(1000), at(1001), at(1002)};
    h.reset(fresh, 0.1);
    REQUIRE(h.points().size() == 3);
    CHECK(h.points().front().reserveBand == 0.1);
    h.append(at(999), 0.1); // older than the newest: e.g. a signal from before a restart
    CHECK(h.points().size() == 3);
    h.append(at(1003), 0.1);
    CHECK(h.points().size() == 4);
}

TEST_CASE("the reserve kept is multiplier x band, at most the whole machine", "[tray]") {
    SampleHistory h(std::chrono::seconds(60));
    h.append(at(1, 4.0), 0.05);
    h.append(at(2, 16.0), 0.1);
    CHECK(h.points()[0].reserveKept() == Approx(0.2));
    CHECK(h.points()[1].reserveKept() == Approx(1.0));
}

TEST_CASE("after the wall clock goes back, the history starts over instead of freezing", "[tray]") {
    SampleHistory h(std::chrono::seconds(60));
    for (std::uint64_t t = 5000; t < 5010; ++t) {
        h.append(at(t), 0.05);
    }
    // An hour back (e.g. NTP stepping the clock): the first samples could be stale ones, then a run in order.
    for (std::uint64_t t = 1400; t < 1400 + SampleHistory::kClockJumpRun - 1; ++t) {
        h.append(at(t), 0.05);
        CHECK(h.points().back().sample.timeUSec == 5009'000'000);
    }
    h.append(at(1400 + SampleHistory::kClockJumpRun - 1), 0.05);
    REQUIRE(h.points().size() == SampleHistory::kClockJumpRun);
    CHECK(h.points().front().sample.timeUSec == 1400'000'000);
    h.append(at(1403), 0.05);
    CHECK(h.points().back().sample.timeUSec == 1403'000'000);

    // A day forward: the older points fall out of the span, the chart goes on from the new time.
    h.append(at(1403 + 86400), 0.05);
    REQUIRE(h.points().size() == 1);
}

TEST_CASE("stale samples out of order do not start the history over", "[tray]") {
    SampleHistory h(std::chrono::seconds(60));
    for (std::uint64_t t = 100; t < 110; ++t) {
        h.append(at(t), 0.05);
    }
    // Older samples, but never kClockJumpRun in order: dropped, and an in-order sample ends the run.
    h.append(at(50), 0.05);
    h.append(at(40), 0.05);
    h.append(at(51), 0.05);
    h.append(at(110), 0.05);
    h.append(at(52), 0.05);
    CHECK(h.points().size() == 11);
    CHECK(h.points().front().sample.timeUSec == 100'000'000);
    CHECK(h.points().back().sample.timeUSec == 110'000'000);
}
