#include "ScopedEnv.h"
#include "util/WallClock.h"

#include <catch2/catch.hpp>

#include <ctime>

using namespace nicer;
using namespace std::chrono;

namespace {

/// Central European time with its summer time, as a POSIX rule (no tzdata needed): UTC+1, UTC+2 from the last
/// Sunday of March to the last of October.
struct CentralEurope {
    CentralEurope()
        : tz("TZ", "CET-1CEST,M3.5.0,M10.5.0/3") {
        tzset();
    }
    ~CentralEurope() { tzset(); }
    test::ScopedEnv tz;
};

wallclock::TimePoint utc(int year, int month, int day, int hour, int minute) {
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    return system_clock::from_time_t(timegm(&tm));
}

} // namespace

TEST_CASE("durations read as people say them") {
    CHECK(wallclock::durationText(milliseconds(12'400)) == "12 s");
    CHECK(wallclock::durationText(seconds(200)) == "3 min 20 s");
    CHECK(wallclock::durationText(seconds(180)) == "3 min");
    CHECK(wallclock::durationText(seconds(7500)) == "2 h 5 min");
    CHECK(wallclock::durationText(milliseconds(-5)) == "0 s");
}

TEST_CASE("durations are read as people write them") {
    CHECK(*wallclock::parseDuration("90s") == seconds(90));
    CHECK(*wallclock::parseDuration("15m") == minutes(15));
    CHECK(*wallclock::parseDuration("15min") == minutes(15));
    CHECK(*wallclock::parseDuration(" 1h ") == hours(1));
    CHECK(*wallclock::parseDuration("1h30m") == minutes(90));
    CHECK(*wallclock::parseDuration("2d") == hours(48));
    CHECK(*wallclock::parseDuration("1d2h3m4s") == seconds(93784));
    for (const char* bad : {"", "1", "h", "1x", "1m1h", "1m1min", "1h1h", "0s", "-1h", "1.5h", "1 h"}) {
        INFO(bad);
        const auto parsed = wallclock::parseDuration(bad);
        REQUIRE_FALSE(parsed);
        CHECK(parsed.error().kind == ErrorKind::InvalidInput);
        CHECK_THAT(parsed.error().message, Catch::Contains("give it as 90s, 15m, 1h, 1h30m or 2d"));
    }
    CHECK_THAT(wallclock::parseDuration("5").error().message, Catch::Contains("a number needs its unit"));
}

TEST_CASE("times to come are read in the local zone") {
    const CentralEurope zone;
    const auto now = utc(2026, 11, 30, 9, 0); // Monday 10:00 local
    CHECK(*wallclock::parseTime("18:00", now) == utc(2026, 11, 30, 17, 0));
    // 08:00 has passed today: tomorrow's.
    CHECK(*wallclock::parseTime("08:00", now) == utc(2026, 12, 1, 7, 0));
    CHECK(*wallclock::parseTime("tomorrow", now) == utc(2026, 11, 30, 23, 0));
    CHECK(*wallclock::parseTime("tomorrow 08:30", now) == utc(2026, 12, 1, 7, 30));
    CHECK(*wallclock::parseTime("2026-12-24 18:00", now) == utc(2026, 12, 24, 17, 0));
    // The day summer time begins has 23 hours: tomorrow still starts at local midnight.
    CHECK(*wallclock::parseTime("tomorrow", utc(2026, 3, 28, 11, 0)) == utc(2026, 3, 28, 23, 0));
    CHECK(*wallclock::parseTime("tomorrow", utc(2026, 3, 29, 11, 0)) == utc(2026, 3, 29, 22, 0));
    for (const char* bad :
         {"", "25:00", "8", "8:0", "tomorrow 8", "2026-12-24", "2026-11-30 09:00", "soon"}) {
        INFO(bad);
        const auto parsed = wallclock::parseTime(bad, now);
        REQUIRE_FALSE(parsed);
        CHECK(parsed.error().kind == ErrorKind::InvalidInput);
        CHECK_THAT(parsed.error().message, Catch::Contains("give it as 18:00, tomorrow"));
    }
    CHECK_THAT(wallclock::parseTime("2026-11-30 09:00", now).error().message,
               Catch::Contains("it has passed"));
}

TEST_CASE("times read from now: the time alone today, tomorrow's by name, later ones with their day") {
    const CentralEurope zone;
    const auto now = utc(2026, 11, 30, 9, 0);
    CHECK(wallclock::timeText(utc(2026, 11, 30, 17, 0), now) == "18:00");
    CHECK(wallclock::timeText(utc(2026, 11, 30, 23, 0), now) == "tomorrow 00:00");
    CHECK(wallclock::timeText(utc(2026, 12, 1, 7, 0), now) == "tomorrow 08:00");
    CHECK(wallclock::timeText(utc(2026, 12, 3, 17, 0), now) == "Thu 3 Dec 18:00");
    CHECK(wallclock::untilText(utc(2026, 11, 30, 11, 5), now) == "until 12:05 (2 h 5 min left)");
    CHECK(wallclock::untilText(now + seconds(20), now) == "until 10:00 (1 min left)");
    CHECK(wallclock::untilText(now + hours(1) + milliseconds(40), now) == "until 11:00 (1 h left)");
}

TEST_CASE("the local minute of the week") {
    const CentralEurope zone;
    const auto monday = wallclock::localMinute(utc(2026, 11, 30, 9, 5));
    CHECK(monday.weekday == 1);
    CHECK(monday.minute == 10 * 60 + 5);
    // 23:30 UTC on Saturday is already Sunday in the zone.
    const auto sunday = wallclock::localMinute(utc(2026, 11, 28, 23, 30));
    CHECK(sunday.weekday == 0);
    CHECK(sunday.minute == 30);
}
