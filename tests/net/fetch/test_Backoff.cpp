#include "net/fetch/Backoff.h"

#include <catch2/catch.hpp>

#include <limits>
#include <set>
#include <vector>

using namespace nicer::net;
using namespace std::chrono_literals;

namespace {

/// A random source that always returns @p value.
std::function<double()> constant(double value) {
    return [value] { return value; };
}

/// The waits of @p count attempts.
std::vector<std::chrono::milliseconds> waits(Backoff& backoff, int count) {
    std::vector<std::chrono::milliseconds> out;
    out.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        out.push_back(backoff.next());
    }
    return out;
}

using Waits = std::vector<std::chrono::milliseconds>;

} // namespace

TEST_CASE("Backoff doubles up to the cap, jittering down to half", "[Backoff]") {
    Backoff lowest(100ms, 1000ms, constant(0.0));
    CHECK(waits(lowest, 7) == Waits{50ms, 100ms, 200ms, 400ms, 500ms, 500ms, 500ms});

    Backoff highest(100ms, 1000ms, constant(0.9999999));
    CHECK(waits(highest, 7) == Waits{100ms, 200ms, 400ms, 800ms, 1000ms, 1000ms, 1000ms});

    Backoff middle(100ms, 1000ms, constant(0.5));
    CHECK(waits(middle, 5) == Waits{75ms, 150ms, 300ms, 600ms, 750ms});
}

TEST_CASE("Backoff draws a fresh random number for every wait", "[Backoff]") {
    std::vector<double> draws = {0.0, 1.0 - 1e-9, 0.25, 0.75};
    std::size_t next = 0;
    Backoff backoff(1000ms, 60s, [&] { return draws.at(next++); });
    CHECK(waits(backoff, 4) == Waits{500ms, 2000ms, 2500ms, 7000ms});
    CHECK(next == 4);
}

TEST_CASE("Backoff counts attempts and starts over after reset", "[Backoff]") {
    Backoff backoff(10ms, 10s, constant(0.0));
    CHECK(backoff.attempts() == 0);
    CHECK(waits(backoff, 3) == Waits{5ms, 10ms, 20ms});
    CHECK(backoff.attempts() == 3);
    backoff.reset();
    CHECK(backoff.attempts() == 0);
    CHECK(backoff.next() == 5ms);
    CHECK(backoff.attempts() == 1);
}

TEST_CASE("Backoff never waits zero and clamps a bad random source", "[Backoff]") {
    Backoff tiny(0ms, 0ms, constant(0.0));
    CHECK(waits(tiny, 3) == Waits{1ms, 1ms, 1ms});

    Backoff below(100ms, 1000ms, constant(-3.0));
    CHECK(below.next() == 50ms);
    Backoff above(100ms, 1000ms, constant(42.0));
    CHECK(above.next() == 100ms);

    // A cap below base is raised to base.
    Backoff inverted(500ms, 100ms, constant(0.9999999));
    CHECK(waits(inverted, 3) == Waits{500ms, 500ms, 500ms});

    // Odd ceilings round the lower bound up.
    Backoff odd(3ms, 3ms, constant(0.0));
    CHECK(odd.next() == 2ms);
}

TEST_CASE("Backoff saturates at the cap after many attempts instead of overflowing", "[Backoff]") {
    Backoff backoff(250ms, 30s, constant(0.0));
    for (int i = 0; i < 1000; ++i) {
        const auto wait = backoff.next();
        REQUIRE(wait >= 125ms);
        REQUIRE(wait <= 30s);
    }
    CHECK(backoff.next() == 15s);

    const auto huge = std::chrono::milliseconds(std::numeric_limits<std::chrono::milliseconds::rep>::max());
    Backoff unbounded(1ms, huge, constant(1.0));
    for (int i = 0; i < 200; ++i) {
        unbounded.next();
    }
    CHECK(unbounded.next() == huge);
}

TEST_CASE("Backoff with a real random source stays in [d/2, d] and varies", "[Backoff]") {
    Backoff backoff(1000ms, 1000ms, makeUniform01());
    std::set<std::chrono::milliseconds> seen;
    for (int i = 0; i < 200; ++i) {
        const auto wait = backoff.next();
        REQUIRE(wait >= 500ms);
        REQUIRE(wait <= 1000ms);
        seen.insert(wait);
    }
    CHECK(seen.size() > 20);
}

TEST_CASE("makeUniform01 draws from 0 inclusive to 1 exclusive", "[Backoff]") {
    auto uniform = makeUniform01();
    double low = 1.0;
    double high = 0.0;
    for (int i = 0; i < 10'000; ++i) {
        const double u = uniform();
        REQUIRE(u >= 0.0);
        REQUIRE(u < 1.0);
        low = std::min(low, u);
        high = std::max(high, u);
    }
    CHECK(low < 0.01);
    CHECK(high > 0.99);
}

TEST_CASE("retryDelay takes the longer of backoff and Retry-After", "[Backoff]") {
    CHECK(retryDelay(2s, std::nullopt) == 2s);
    CHECK(retryDelay(2s, 10s) == 10s);
    CHECK(retryDelay(2500ms, 1s) == 2500ms);
    CHECK(retryDelay(2s, 0s) == 2s);
}

TEST_CASE("retryDelay honours Retry-After above the backoff cap but not beyond an hour", "[Backoff]") {
    CHECK(retryDelay(30s, 10min) == 10min);
    CHECK(retryDelay(30s, 3600s) == 1h);
    CHECK(retryDelay(30s, 3601s) == 1h);
    CHECK(retryDelay(30s, 48h) == 1h);
    CHECK(retryDelay(30s, std::chrono::seconds::max()) == kMaxRetryAfter);
    // A backoff configured above an hour is the caller's choice and stays.
    CHECK(retryDelay(2h, 30min) == 2h);
    CHECK(retryDelay(2h, 48h) == 2h);
}
