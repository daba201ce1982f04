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
