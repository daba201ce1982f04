#include "control/WeeklyHours.h"

#include <catch2/catch.hpp>

using nicer::ErrorKind;
using nicer::control::WeeklyHours;

namespace {

constexpr int kSunday = 0, kMonday = 1, kFriday = 5, kSaturday = 6;

int at(int hour, int minute = 0) {
    return hour * 60 + minute;
}

} // namespace

TEST_CASE("every hour by default, and for any or nothing", "[WeeklyHours]") {
    for (const char* text : {"", "any", " ANY ", "00:00-24:00", "mon-sun any"}) {
        INFO(text);
        const auto hours = WeeklyHours::parse(text);
        REQUIRE(hours);
        CHECK(hours->always());
        CHECK(hours->text() == "any");
        CHECK(*hours == WeeklyHours());
        CHECK_FALSE(hours->minutesUntilChange(kMonday, at(12)));
    }
}

TEST_CASE("a span of every day, and one over midnight read day by day as BOINC does", "[WeeklyHours]") {
    const auto office = *WeeklyHours::parse("09:00-17:30");
    CHECK(office.text() == "09:00-17:30");
    CHECK_FALSE(office.allows(kMonday, at(8, 59)));
    CHECK(office.allows(kMonday, at(9)));
    CHECK(office.allows(kSunday, at(17, 29)));
    CHECK_FALSE(office.allows(kSunday, at(17, 30)));
    CHECK(*office.minutesUntilChange(kMonday, at(8, 59)) == 1);
    CHECK(*office.minutesUntilChange(kMonday, at(17)) == 30);

    const auto night = *WeeklyHours::parse("22:00-06:00");
    CHECK(night.allows(kMonday, at(23)));
    CHECK(night.allows(kMonday, at(5, 59)));
    CHECK_FALSE(night.allows(kMonday, at(6)));
    CHECK_FALSE(night.allows(kMonday, at(21, 59)));
    CHECK(*night.minutesUntilChange(kMonday, at(6)) == 16 * 60);
    // To the end of the day.
    const auto evening = *WeeklyHours::parse("20:00-24:00");
    CHECK(evening.text() == "20:00-24:00");
    CHECK(evening.allows(kMonday, at(23, 59)));
    CHECK_FALSE(evening.allows(kMonday, at(0)));
}

TEST_CASE("days override every day's hours, later entries over earlier ones", "[WeeklyHours]") {
    const auto hours = *WeeklyHours::parse("Mon-Fri 18:00-08:00; sat,sun any");
    CHECK(hours.text() == "mon-fri 18:00-08:00; sat,sun any");
    CHECK_FALSE(hours.allows(kFriday, at(12)));
    CHECK(hours.allows(kFriday, at(19)));
    CHECK(hours.allows(kSaturday, at(12)));
    CHECK(hours.allows(kSunday, at(12)));
    // Friday 12:00 until 18:00; Friday 19:00 runs through the weekend to Monday 08:00.
    CHECK(*hours.minutesUntilChange(kFriday, at(12)) == 6 * 60);
    CHECK(*hours.minutesUntilChange(kFriday, at(19)) == 5 * 60 + 2 * 24 * 60 + 8 * 60);

    const auto noSunday = *WeeklyHours::parse("09:00-17:00; sun none");
    CHECK_FALSE(noSunday.allows(kSunday, at(12)));
    CHECK(noSunday.allows(kSaturday, at(12)));
    const auto weekend = *WeeklyHours::parse("none; fri-mon any"); // a range over Sunday
    CHECK(weekend.allows(kSunday, at(3)));
    CHECK(weekend.allows(kMonday, at(3)));
    CHECK_FALSE(weekend.allows(3, at(3)));
    CHECK(WeeklyHours::parse(weekend.text())->text() == weekend.text());
}

TEST_CASE("what cannot be read is refused, saying what and giving the form", "[WeeklyHours]") {
    for (const char* text : {"9-17", "09:00", "09:00-17:60", "25:00-26:00", "09:00-09:00", "24:00-08:00",
                             "sat", "weekdays 09:00-17:00", "mon 09:00-17:00; 10:00-11:00", ";", "mon-fri"}) {
        INFO(text);
        const auto hours = WeeklyHours::parse(text);
        REQUIRE_FALSE(hours);
        CHECK(hours.error().kind == ErrorKind::InvalidInput);
        CHECK_THAT(hours.error().message, Catch::Contains("write entries such as"));
    }
    CHECK_THAT(WeeklyHours::parse("09:00-09:00").error().message,
               Catch::StartsWith("'09:00-09:00' is an empty span of hours"));
    CHECK_THAT(WeeklyHours::parse("mon 09:00-17:00; 10:00-11:00").error().message,
               Catch::Contains("only the first entry is every day's"));
}
