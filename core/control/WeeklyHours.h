#pragma once

#include "util/Result.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace nicer::control {

/**
 * The hours of the week in which something may run, as BOINC's preferences have them (cpu_times and
 * net_times with their day-of-week overrides, lib/prefs.h), written as text:
 *
 *     any                                   every hour (the default; also the empty text)
 *     18:00-08:00                           every day from 18:00, and until 08:00
 *     mon-fri 18:00-08:00; sat,sun any      weekdays' evenings and nights, and weekends whole
 *     09:00-17:00; sun none                 office hours, and never on Sundays
 *
 * Entries are separated by ';'. An entry without days is every day's; the entries after it set the days
 * they name (a day, a range such as mon-fri, or a list such as sat,sun), later ones over earlier ones. Hours
 * are HH:MM-HH:MM (24:00 ends a day), any or none. As in BOINC, each day is read on its own: 22:00-06:00 on
 * a day is its first six hours and its last two, whatever the next day says.
 */
class WeeklyHours {
public:
    /// Every hour of the week.
    WeeklyHours() = default;
    /// The hours @p text gives; the error says what was wrong where, and gives the form.
    static Result<WeeklyHours> parse(std::string_view text);

    /// The text parse() reads back as these hours, written the one way: lower case, HH:MM, "; " between
    /// entries; "any" for every hour.
    const std::string& text() const { return m_text; }
    /// Every hour of every day.
    bool always() const;
    /// Whether the hours hold at @p minute (0..1439) of @p weekday (0 Sunday .. 6 Saturday).
    bool allows(int weekday, int minute) const;
    /// Minutes from @p minute of @p weekday until allows() says otherwise; none when it never does.
    std::optional<int> minutesUntilChange(int weekday, int minute) const;

    bool operator==(const WeeklyHours& other) const { return m_days == other.m_days; }

private:
    /// One day's hours: [from, until) in minutes since midnight; from > until wraps over midnight (the day's
    /// start and its end); from == until is none.
    struct Day {
        int from = 0;
        int until = 24 * 60;
        bool operator==(const Day&) const = default;
    };
    std::array<Day, 7> m_days{};
    std::string m_text = "any";
};

} // namespace nicer::control
