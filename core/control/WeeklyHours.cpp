#include "control/WeeklyHours.h"

#include "util/Text.h"

#include <algorithm>

namespace nicer::control {

namespace {

constexpr int kDay = 24 * 60;
constexpr std::array<std::string_view, 7> kDayNames = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
constexpr std::string_view kForm = "write entries such as '18:00-08:00', 'mon-fri 18:00-08:00; sat,sun any' "
                                   "or '09:00-17:00; sun none' (days "
                                   "mon..sun, hours HH:MM-HH:MM, any or none)";

std::optional<int> dayIndex(std::string_view name) {
    const auto it = std::find(kDayNames.begin(), kDayNames.end(), name);
    return it == kDayNames.end() ? std::nullopt : std::optional(static_cast<int>(it - kDayNames.begin()));
}

/// "HH:MM" as minutes since midnight, 24:00 allowed.
std::optional<int> clockMinute(std::string_view text) {
    int hour = 0;
    int minute = 0;
    if (text.size() != 5 || text[2] != ':' || !text::parseNumber(text.substr(0, 2), hour) ||
        !text::parseNumber(text.substr(3, 2), minute) || minute > 59 || hour > 24 ||
        (hour == 24 && minute != 0)) {
        return std::nullopt;
    }
    return hour * 60 + minute;
}

std::string clockText(int minute) {
    const auto two = [](int n) { return std::string(n < 10 ? "0" : "") + std::to_string(n); };
    return two(minute / 60) + ":" + two(minute % 60);
}

/// The days @p text names: "mon", "mon-fri" (wrapping over Sunday: "fri-mon"), "sat,sun".
std::optional<std::array<bool, 7>> parseDays(std::string_view text) {
    std::array<bool, 7> days{};
    for (const auto part : text::split(text, ',')) {
        const auto dash = part.find('-');
        const auto first = dayIndex(part.substr(0, dash));
        const auto last = dash == std::string_view::npos ? first : dayIndex(part.substr(dash + 1));
        if (!first || !last) {
            return std::nullopt;
        }
        for (int d = *first;; d = (d + 1) % 7) {
            days[static_cast<std::size_t>(d)] = true;
            if (d == *last) {
                break;
            }
        }
    }
    return days;
}

} // namespace

Result<WeeklyHours> WeeklyHours::parse(std::string_view text) {
    const auto lower = text::toLowerAscii(text::trim(text));
    WeeklyHours hours;
    if (lower.empty() || lower == "any") {
        return hours;
    }
    std::string canonical;
    for (const auto rawEntry : text::split(lower, ';')) {
        const auto entry = text::trim(rawEntry);
        const auto bad = [&](std::string_view why) {
            return Error{"'" + std::string(entry) + "' " + std::string(why) + ": " + std::string(kForm),
                         ErrorKind::InvalidInput};
        };
        if (entry.empty()) {
            return bad("is an empty entry");
        }
        const auto space = entry.find(' ');
        std::array<bool, 7> days{};
        days.fill(true);
        std::string_view span = entry;
        std::string daysText;
        if (space != std::string_view::npos) {
            const auto named = parseDays(entry.substr(0, space));
            if (!named) {
                return bad("does not start with days (mon..sun, as mon, mon-fri or sat,sun)");
            }
            days = *named;
            daysText = std::string(entry.substr(0, space)) + " ";
            span = text::trim(entry.substr(space + 1));
        } else if (!canonical.empty()) {
            return bad("has no days: only the first entry is every day's");
        }
        Day day;
        if (span == "none") {
            day = {0, 0};
        } else if (span != "any") {
            const auto dash = span.find('-');
            const auto from = clockMinute(span.substr(0, dash));
            const auto until =
                dash == std::string_view::npos ? std::nullopt : clockMinute(span.substr(dash + 1));
            if (!from || !until || *from == kDay) {
                return bad("does not end with hours (HH:MM-HH:MM, any or none)");
            }
            if (*from == *until) {
                return bad("is an empty span of hours (for no hours write none, for all of them any)");
            }
            day = {*from, *until == kDay && *from == 0 ? kDay : *until % kDay};
        }
        for (std::size_t d = 0; d < 7; ++d) {
            if (days[d]) {
                hours.m_days[d] = day;
            }
        }
        canonical += (canonical.empty() ? "" : "; ") + daysText +
                     (span == "any" || span == "none"
                          ? std::string(span)
                          : clockText(day.from) + "-" + clockText(day.until == 0 ? kDay : day.until));
    }
    hours.m_text = hours.always() ? "any" : canonical;
    return hours;
}

bool WeeklyHours::always() const {
    return std::all_of(m_days.begin(), m_days.end(), [](const Day& d) { return d == Day{}; });
}

bool WeeklyHours::allows(int weekday, int minute) const {
    const Day& d = m_days[static_cast<std::size_t>(((weekday % 7) + 7) % 7)];
    if (d.from <= d.until) {
        return minute >= d.from && minute < d.until;
    }
    return minute >= d.from || minute < d.until;
}

std::optional<int> WeeklyHours::minutesUntilChange(int weekday, int minute) const {
    const bool now = allows(weekday, minute);
    // A week and a day at most: the same minute of the next week says the same.
    for (int step = 1; step <= 7 * kDay; ++step) {
        const int total = weekday * kDay + minute + step;
        if (allows((total / kDay) % 7, total % kDay) != now) {
            return step;
        }
    }
    return std::nullopt;
}

} // namespace nicer::control
