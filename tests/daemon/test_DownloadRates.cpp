#include "daemon/DownloadRates.h"

#include <catch2/catch.hpp>

using nicer::daemon::DownloadRates;
using namespace std::chrono_literals;

namespace {

const DownloadRates::Clock::time_point t0{std::chrono::hours(1)};

} // namespace

TEST_CASE("the rate of a file is its bytes added over the window, per second", "[DownloadRates]") {
    DownloadRates rates(2s);
    // File 0 grows 100 kB per 100 ms; file 1 stands still.
    for (int i = 0; i <= 30; ++i) {
        rates.record(t0 + i * 100ms, {static_cast<std::uint64_t>(i) * 100'000, 5'000});
    }
    const auto now = t0 + 3000ms;
    CHECK(rates.rate(0, now) == Approx(1'000'000.0));
    CHECK(rates.rate(1, now) == 0.0);
    CHECK(rates.rate(2, now) == 0.0); // no such file
}

TEST_CASE("without looks in the window the rate is zero, not the last one", "[DownloadRates]") {
    DownloadRates rates(2s);
    rates.record(t0, {0});
    CHECK(rates.rate(0, t0) == 0.0); // one look measures nothing
    rates.record(t0 + 1s, {1'000});
    CHECK(rates.rate(0, t0 + 1s) == Approx(1'000.0));
    // The download stalled: nothing recorded since. Once its looks leave the window, the rate is gone.
    CHECK(rates.rate(0, t0 + 10s) == 0.0);
}

TEST_CASE("bytes that went away count as no progress, not as a negative rate", "[DownloadRates]") {
    DownloadRates rates(2s);
    rates.record(t0, {900'000});
    rates.record(t0 + 500ms, {0}); // the part file started over
    CHECK(rates.rate(0, t0 + 500ms) == 0.0);
    rates.record(t0 + 1500ms, {0}); // the looks before t0 + 600 ms leave the two-second window
    rates.record(t0 + 2600ms, {200'000});
    CHECK(rates.rate(0, t0 + 2600ms) == Approx(200'000.0 / 1.1));
}

TEST_CASE("looks close together keep the newest bytes, and a new file list starts over", "[DownloadRates]") {
    DownloadRates rates(2s);
    rates.record(t0, {0});
    rates.record(t0 + 10ms, {10}); // merged into the look at t0
    rates.record(t0 + 1s, {1'010});
    CHECK(rates.rate(0, t0 + 1s) == Approx(1'000.0));
    rates.record(t0 + 1100ms, {1'100, 0});
    CHECK(rates.rate(0, t0 + 1100ms) == 0.0);
}
