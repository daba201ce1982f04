#pragma once

#include "util/Result.h"

#include <chrono>
#include <string>
#include <string_view>

namespace nicer::wallclock {

// Times on the wall clock as the volunteer says and reads them, in the local time zone (TZ, else
// /etc/localtime): the snooze's end and the schedules' hours.

using TimePoint = std::chrono::system_clock::time_point;

/// A duration as people read it: "12 s", "3 min 20 s", "2 h 5 min".
std::string durationText(std::chrono::milliseconds duration);

/// "90s", "15m", "15min", "1h", "1h30m", "2d" (days, hours, minutes and seconds, each at most once, in that
/// order); the error says what was wrong and gives the forms.
Result<std::chrono::seconds> parseDuration(std::string_view text);

/**
 * The next time @p text names after @p now: "18:00" (today, or tomorrow when that has passed), "tomorrow"
 * (the start of tomorrow: for the rest of today), "tomorrow 08:00", "2026-12-24 18:00"; the error says what
 * was wrong and gives the forms, or that the time has passed.
 */
Result<TimePoint> parseTime(std::string_view text, TimePoint now);

/// @p t as people read it from @p now: "18:00" today, "tomorrow 08:00", "Thu 24 Dec 18:00" within a week or
/// after.
std::string timeText(TimePoint t, TimePoint now);

/// "until 18:00 (2 h 5 min left)": when something ends, and how long that is from @p now.
std::string untilText(TimePoint end, TimePoint now);

/// The local time's day of the week (0 Sunday .. 6 Saturday, as BOINC and struct tm count) and the minutes
/// since that day's midnight.
struct LocalMinute {
    int weekday = 0;
    int minute = 0;
};
LocalMinute localMinute(TimePoint t);

} // namespace nicer::wallclock
