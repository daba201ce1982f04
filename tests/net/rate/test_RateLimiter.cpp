#include "net/rate/RateLimiter.h"

#include <catch2/catch.hpp>

using namespace nicer::net;
using namespace std::chrono_literals;

namespace {

const RateLimiter::TimePoint t0{std::chrono::seconds(1000)};

} // namespace

TEST_CASE("An unlimited RateLimiter grants everything", "[RateLimiter]") {
    RateLimiter limiter(t0);
    CHECK_FALSE(limiter.rate());
    CHECK(limiter.take(123456789, t0) == 123456789);
    limiter.charge(1 << 30, t0); // no debt without a limit
    CHECK(limiter.take(5, t0) == 5);
}

TEST_CASE("A first limit starts empty and refills at the rate", "[RateLimiter]") {
    RateLimiter limiter(t0, 100ms);
    limiter.setRate(100'000.0, t0); // bucket: max(16 KiB, 10 kB) = 16384
    CHECK(limiter.take(1000, t0) == 0);
    CHECK(limiter.take(50'000, t0 + 100ms) == 10'000);
    CHECK(limiter.take(50'000, t0 + 100ms) == 0);
    CHECK(limiter.take(3000, t0 + 150ms) == 3000);
    CHECK(limiter.take(50'000, t0 + 150ms) == 2000);
}

TEST_CASE("The bucket never saves more than its burst", "[RateLimiter]") {
    RateLimiter limiter(t0, 100ms);
    limiter.setRate(1'000'000.0, t0); // bucket: 100 ms at 1 MB/s
    CHECK(limiter.take(10'000'000, t0 + 10s) == 100'000);

    RateLimiter slow(t0, 100ms);
    slow.setRate(1000.0, t0); // 100 ms is only 100 bytes: the floor of kMinBurstBytes applies
    CHECK(slow.take(1'000'000, t0 + 1h) == static_cast<std::uint64_t>(RateLimiter::kMinBurstBytes));
}

TEST_CASE("Over a long run the grants keep to the rate", "[RateLimiter]") {
    RateLimiter limiter(t0, 100ms);
    const double rate = 3'000'000.0;
    limiter.setRate(rate, t0);
    std::uint64_t total = 0;
    auto now = t0;
    for (int i = 0; i < 1000; ++i) { // 10 s in 10 ms steps, always hungry
        now += 10ms;
        total += limiter.take(1'000'000'000, now);
    }
    CHECK(static_cast<double>(total) <= rate * 10.0 + 1.0);
    CHECK(static_cast<double>(total) >= rate * 10.0 - 2.0); // whole bytes only: rounding
}

TEST_CASE("Charged bytes are a debt that delays later grants", "[RateLimiter]") {
    RateLimiter limiter(t0, 100ms);
    limiter.setRate(100'000.0, t0);
    limiter.charge(50'000, t0);
    CHECK(limiter.available(t0) == Approx(-50'000.0));
    CHECK(limiter.take(1000, t0 + 400ms) == 0); // still 10 kB short
    CHECK(limiter.take(1000, t0 + 510ms) == 1000);
}

TEST_CASE("Changing the rate keeps saved tokens within the new bucket", "[RateLimiter]") {
    RateLimiter limiter(t0, 100ms);
    limiter.setRate(1'000'000.0, t0);
    CHECK(limiter.available(t0 + 1s) == Approx(100'000.0));
    limiter.setRate(200'000.0, t0 + 1s); // bucket shrinks to 20 kB
    CHECK(limiter.available(t0 + 1s) == Approx(20'000.0));
    limiter.setRate(std::nullopt, t0 + 1s);
    CHECK(limiter.take(7, t0 + 1s) == 7);
    limiter.setRate(200'000.0, t0 + 1s); // from unlimited: empty again
    CHECK(limiter.take(1, t0 + 1s) == 0);
}

TEST_CASE("A rate of zero (or below) grants nothing", "[RateLimiter]") {
    RateLimiter limiter(t0);
    limiter.setRate(-5.0, t0);
    REQUIRE(limiter.rate());
    CHECK(*limiter.rate() == 0.0);
    CHECK(limiter.take(1, t0 + 1h) == 0);
}

TEST_CASE("A clock that goes backwards adds no tokens", "[RateLimiter]") {
    RateLimiter limiter(t0 + 1s, 100ms);
    limiter.setRate(100'000.0, t0 + 1s);
    CHECK(limiter.take(1000, t0) == 0);
    CHECK(limiter.take(100'000, t0 + 1100ms) == 10'000);
}

TEST_CASE("parseByteRate reads bytes per second with binary suffixes", "[RateLimiter]") {
    CHECK(*parseByteRate("250000") == 250000.0);
    CHECK(*parseByteRate("500k") == 512000.0);
    CHECK(*parseByteRate("500K") == 512000.0);
    CHECK(*parseByteRate("10M") == 10485760.0);
    CHECK(*parseByteRate("10m") == 10485760.0);
    CHECK(*parseByteRate("1.5M") == 1572864.0);
    CHECK(*parseByteRate("2G") == 2147483648.0);
    CHECK(*parseByteRate("10MiB") == 10485760.0);
    CHECK(*parseByteRate("10MB") == 10485760.0);
    CHECK(*parseByteRate("64KB") == 65536.0);
    CHECK(*parseByteRate("100B") == 100.0);
    // CLI11's size units go further, all 1024-based.
    CHECK(*parseByteRate("2Ki") == 2048.0);
    CHECK(*parseByteRate("1T") == 1099511627776.0);
    CHECK(*parseByteRate(".5k") == 512.0);
}

TEST_CASE("parseByteRate refuses what is not a positive rate, saying what is accepted", "[RateLimiter]") {
    for (const char* bad : {"", "k", "-1", "10X", "1..5", "10 M", "M10", "10Mx", "1e6", "10iB", "0x10", "+5",
                            "5k ", "inf", "1,5M"}) {
        INFO(bad);
        const auto parsed = parseByteRate(bad);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains("e.g. 500k or 10M"));
    }
    for (const char* tooSmall : {"0", "0.5", "0k"}) {
        INFO(tooSmall);
        const auto parsed = parseByteRate(tooSmall);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains("at least 1 byte per second"));
    }
}
