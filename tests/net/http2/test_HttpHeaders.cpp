#include "net/http2/HttpHeaders.h"

#include <catch2/catch.hpp>

#include <ctime>
#include <limits>
#include <string>

using namespace nicer::net;
using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// Sun, 06 Nov 1994 08:49:37 GMT, the example date of RFC 9110.
const Clock::time_point kRfcDate = Clock::from_time_t(784111777);

Clock::time_point utc(int year, int month, int day) {
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    return Clock::from_time_t(timegm(&tm));
}

} // namespace

TEST_CASE("parseContentRange reads a range with a known total", "[HttpHeaders]") {
    CHECK(parseContentRange("bytes 0-499/1234") == ContentRange{0, 499, 1234});
    CHECK(parseContentRange("bytes 500-1233/1234") == ContentRange{500, 1233, 1234});
    CHECK(parseContentRange("bytes 0-0/1") == ContentRange{0, 0, 1});
    CHECK(parseContentRange("BYTES 7-9/10") == ContentRange{7, 9, 10}); // the unit is case-insensitive
    CHECK(parseContentRange("  bytes 1-2/3 ") == ContentRange{1, 2, 3});
    CHECK(parseContentRange("bytes 0-18446744073709551614/18446744073709551615") ==
          ContentRange{0, kMax - 1, kMax});
}

TEST_CASE("parseContentRange reads a range whose total is unknown", "[HttpHeaders]") {
    const auto range = parseContentRange("bytes 100-199/*");
    REQUIRE(range);
    CHECK(range->first == 100);
    CHECK(range->last == 199);
    CHECK_FALSE(range->total.has_value());
    CHECK(parseContentRange("bytes 0-18446744073709551615/*") == ContentRange{0, kMax, std::nullopt});
}

TEST_CASE("parseContentRange refuses ranges that are inconsistent or malformed", "[HttpHeaders]") {
    const auto value = GENERATE(
        as<std::string>{}, "bytes 0-1234/1234", "bytes 0-2000/1234", "bytes 5-4/10", "bytes 5-4/*",
        "bytes 0-0/0", "bytes */1234", "bytes 0-499", "bytes 0-/10", "bytes -5/10", "bytes 0--1/10",
        "bytes -1-5/10", "bytes +0-1/10", "bytes 0-1/+10", "bytes 0x1-2/10", "bytes 0-1/1O", "bytes 0 -1/2",
        "bytes  0-1/2", "bytes 0-1 /2", "bytes 0-1/", "bytes 0-1/**", "bytes0-1/2", "items 0-1/2", "bytes",
        "", "bytes 0-18446744073709551616/*", "bytes 0-1/18446744073709551616");
    INFO("'" << value << "'");
    CHECK_FALSE(parseContentRange(value).has_value());
}

TEST_CASE("parseContentLength takes digits only, without overflow", "[HttpHeaders]") {
    CHECK(parseContentLength("0") == 0u);
    CHECK(parseContentLength("1234") == 1234u);
    CHECK(parseContentLength(" 42\t") == 42u);
    CHECK(parseContentLength("007") == 7u);
    CHECK(parseContentLength("18446744073709551615") == kMax);

    const auto value = GENERATE(as<std::string>{}, "", " ", "-1", "+1", "1e3", "0x10", "4 2", "12a", "1.0",
                                "18446744073709551616", "99999999999999999999999");
    INFO("'" << value << "'");
    CHECK_FALSE(parseContentLength(value).has_value());
}

TEST_CASE("parseContentLength folds a list of equal values and refuses differing ones", "[HttpHeaders]") {
    CHECK(parseContentLength("42, 42") == 42u);
    CHECK(parseContentLength("42,42,42") == 42u);
    CHECK_FALSE(parseContentLength("42, 43").has_value());
    CHECK_FALSE(parseContentLength("42,").has_value());
    CHECK_FALSE(parseContentLength(",42").has_value());
}

TEST_CASE("parseRetryAfter reads delta-seconds", "[HttpHeaders]") {
    const auto now = Clock::now();
    CHECK(parseRetryAfter("120", now) == 120s);
    CHECK(parseRetryAfter("0", now) == 0s);
    CHECK(parseRetryAfter(" 5 ", now) == 5s);
    // Far too long to wait, but a valid answer: saturate and let the caller bound it.
    CHECK(parseRetryAfter("99999999999999999999999999", now) == std::chrono::seconds::max());
    CHECK(parseRetryAfter("18446744073709551615", now) == std::chrono::seconds::max());
    CHECK(parseRetryAfter("9223372036854775806", now) == std::chrono::seconds(9223372036854775806));
}

TEST_CASE("parseRetryAfter reads the three HTTP-date forms relative to now", "[HttpHeaders]") {
    const auto now = kRfcDate - 120s;
    CHECK(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now) == 120s);
    CHECK(parseRetryAfter("Sunday, 06-Nov-94 08:49:37 GMT", now) == 120s);
    CHECK(parseRetryAfter("Sun Nov  6 08:49:37 1994", now) == 120s);
    CHECK(parseRetryAfter("Sun Nov 16 08:49:37 1994", now) == 120s + 10 * 24h);
    CHECK(parseRetryAfter("Mon, 07 Nov 1994 08:49:37 GMT", now) == 120s + 24h);
    CHECK(parseRetryAfter("Tue, 01 Mar 2022 00:00:00 GMT", utc(2022, 2, 28)) == 24h);
    CHECK(parseRetryAfter("Tue, 29 Feb 2000 00:00:00 GMT", utc(2000, 2, 28)) == 24h); // a leap year
    // asctime's day unpadded, as some servers write it, and a leap second.
    CHECK(parseRetryAfter("Sun Nov 6 08:49:37 1994", now) == 120s);
    CHECK(parseRetryAfter("Sun, 06 Nov 1994 08:49:60 GMT", now) == 143s);
}

TEST_CASE("parseRetryAfter rounds a partial second up, so the wait never ends early", "[HttpHeaders]") {
    CHECK(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", kRfcDate - 9700ms) == 10s);
    CHECK(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", kRfcDate - 1ms) == 1s);
}

TEST_CASE("parseRetryAfter gives zero for a date that has passed", "[HttpHeaders]") {
    CHECK(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", kRfcDate) == 0s);
    CHECK(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", kRfcDate + 1h) == 0s);
    CHECK(parseRetryAfter("Sun Nov  6 08:49:37 1994", Clock::now()) == 0s);
}

TEST_CASE("parseRetryAfter takes a date outside the years system_clock's nanoseconds hold", "[HttpHeaders]") {
    // Found by tests/fuzz/fuzz_HttpHeaders: a year before 1678 or after 2261 overflowed (undefined behaviour)
    // when the date became a system_clock time point.
    CHECK(parseRetryAfter("Sun, 06 Nov 1294 08:49:37 GMT", kRfcDate) == 0s);
    CHECK(parseRetryAfter("Sun Nov  6 08:49:37 0001", kRfcDate) == 0s);
    CHECK(parseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", kRfcDate) ==
          std::chrono::seconds(253402300799 - 784111777));
    CHECK(parseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", kRfcDate - 500ms) ==
          std::chrono::seconds(253402300799 - 784111777 + 1));
}

TEST_CASE("parseRetryAfter reads a two-digit year as at most 50 years ahead", "[HttpHeaders]") {
    const auto now = utc(2026, 1, 1);
    // 2076 is exactly 50 years ahead, so it stays in this century...
    CHECK(parseRetryAfter("Friday, 01-Jan-76 00:00:00 GMT", now) ==
          std::chrono::duration_cast<std::chrono::seconds>(utc(2076, 1, 1) - now));
    // ...while 2077 would be more than 50, so it means 1977, which has passed.
    CHECK(parseRetryAfter("Saturday, 01-Jan-77 00:00:00 GMT", now) == 0s);
    CHECK(parseRetryAfter("Friday, 02-Jan-26 00:00:00 GMT", now) == 24h);
}

TEST_CASE("parseRetryAfter refuses values that are neither form", "[HttpHeaders]") {
    const auto value = GENERATE(
        as<std::string>{}, "", "soon", "-5", "+5", "1.5", "5s", "0x10", "1 2",
        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 gmt", "Sun, 06 Nov 1994 08:49:37",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sun 06 Nov 1994 08:49:37 GMT", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT x", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 94", "Sun Nov  6 08:49:37 1994 GMT", "Sun Nov 6 08:49:37",
        "Xunday, 06-Nov-94 08:49:37 GMT", "Sunday, 06-NOV-94 08:49:37 GMT", "Sun Nov  6 08:49:37 19945");
    INFO("'" << value << "'");
    CHECK_FALSE(parseRetryAfter(value, kRfcDate).has_value());
}
