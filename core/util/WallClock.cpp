#include "util/WallClock.h"

#include "util/Text.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>

namespace nicer::wallclock {

namespace {

using namespace std::chrono;

constexpr std::string_view kDurationForms = "give it as 90s, 15m, 1h, 1h30m or 2d";
constexpr std::string_view kTimeForms = "give it as 18:00, tomorrow, 'tomorrow 08:00' or '2026-12-24 18:00'";

std::tm localTm(TimePoint t) {
    const std::time_t seconds = system_clock::to_time_t(t);
    std::tm tm{};
    tzset(); // a time zone changed since the last call (TZ, /etc/localtime) holds from here on
    localtime_r(&seconds, &tm);
    return tm;
}

/// The local time @p tm names (its day fields normalised by mktime, daylight saving time as the zone says).
TimePoint fromLocal(std::tm tm) {
    tm.tm_isdst = -1;
    return system_clock::from_time_t(std::mktime(&tm));
}

/// "HH:MM" into @p tm's hour and minute.
bool readHourMinute(std::string_view text, std::tm& tm) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) {
        return false;
    }
    int hour = 0;
    int minute = 0;
    if (!text::parseNumber(text.substr(0, colon), hour) ||
        !text::parseNumber(text.substr(colon + 1), minute) || hour < 0 || hour > 23 || minute < 0 ||
        minute > 59 || text.size() - colon - 1 != 2) {
        return false;
    }
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = 0;
    return true;
}

} // namespace

std::string durationText(milliseconds duration) {
    const auto s = duration_cast<seconds>(std::max(duration, milliseconds::zero())).count();
    if (s < 60) {
        return std::to_string(s) + " s";
    }
    if (s < 3600) {
        const auto rest = s % 60;
        return std::to_string(s / 60) + " min" + (rest != 0 ? " " + std::to_string(rest) + " s" : "");
    }
    const auto rest = (s % 3600) / 60;
    return std::to_string(s / 3600) + " h" + (rest != 0 ? " " + std::to_string(rest) + " min" : "");
}

Result<seconds> parseDuration(std::string_view text) {
    const auto bad = [&](std::string_view why) {
        return Error{"'" + std::string(text) + "' is not a duration (" + std::string(why) +
                         "): " + std::string(kDurationForms),
                     ErrorKind::InvalidInput};
    };
    struct Unit {
        std::string_view name;
        seconds length;
    };
    // In the order they may come; "min" before "m" so that the longer name is taken.
    constexpr std::array<Unit, 6> units{{{"d", hours(24)},
                                         {"h", hours(1)},
                                         {"min", minutes(1)},
                                         {"m", minutes(1)},
                                         {"s", seconds(1)},
                                         {"", seconds(0)}}};
    auto rest = text::trim(text);
    if (rest.empty()) {
        return bad("it is empty");
    }
    seconds total{0};
    std::size_t next = 0; // the first unit still allowed
    while (!rest.empty()) {
        std::size_t digits = 0;
        while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])) != 0) {
            ++digits;
        }
        long long count = 0;
        if (digits == 0 || digits > 9 || !text::parseNumber(rest.substr(0, digits), count)) {
            return bad("each part is a whole number and a unit");
        }
        rest.remove_prefix(digits);
        auto unit = std::find_if(units.begin() + static_cast<std::ptrdiff_t>(next), units.end() - 1,
                                 [&](const Unit& u) { return rest.starts_with(u.name); });
        if (unit == units.end() - 1) {
            return bad(rest.empty() ? "a number needs its unit"
                                    : "units are d, h, m and s, each once, largest first");
        }
        rest.remove_prefix(unit->name.size());
        // "m" and "min" are one unit: neither may follow the other.
        next = static_cast<std::size_t>(unit - units.begin()) + (unit->name == "min" ? 2 : 1);
        total += count * unit->length;
    }
    if (total <= seconds(0)) {
        return bad("it is no time at all");
    }
    return total;
}

Result<TimePoint> parseTime(std::string_view text, TimePoint now) {
    const auto bad = [&](std::string_view why) {
        return Error{"'" + std::string(text) + "' is not a time to come (" + std::string(why) +
                         "): " + std::string(kTimeForms),
                     ErrorKind::InvalidInput};
    };
    const auto trimmed = text::trim(text);
    std::tm tm = localTm(now);
    std::string_view clock = trimmed;
    TimePoint when;
    if (trimmed == "tomorrow" || trimmed.starts_with("tomorrow ")) {
        clock = text::trim(trimmed.substr(std::string_view("tomorrow").size()));
        tm.tm_mday += 1;
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        if (!clock.empty() && !readHourMinute(clock, tm)) {
            return bad("the time of day is HH:MM");
        }
        when = fromLocal(tm);
    } else if (trimmed.size() > 5 && trimmed[4] == '-') {
        std::tm day{};
        const std::string whole(trimmed);
        const char* end = strptime(whole.c_str(), "%Y-%m-%d %H:%M", &day);
        if (end == nullptr || *end != '\0') {
            return bad("a date is YYYY-MM-DD HH:MM");
        }
        when = fromLocal(day);
    } else {
        if (!readHourMinute(clock, tm)) {
            return bad("the time of day is HH:MM");
        }
        when = fromLocal(tm);
        if (when <= now) { // that time today has passed: tomorrow's
            tm.tm_mday += 1;
            when = fromLocal(tm);
        }
    }
    if (when <= now) {
        return bad("it has passed");
    }
    return when;
}

std::string timeText(TimePoint t, TimePoint now) {
    const std::tm at = localTm(t);
    std::tm today = localTm(now);
    today.tm_hour = today.tm_min = today.tm_sec = 0;
    std::tm tomorrow = today;
    tomorrow.tm_mday += 2;
    const auto startOfToday = fromLocal(today);
    const auto endOfTomorrow = fromLocal(tomorrow);
    char clock[8];
    std::strftime(clock, sizeof clock, "%H:%M", &at);
    if (t >= startOfToday && t < endOfTomorrow) {
        today.tm_mday += 1;
        return (t < fromLocal(today) ? "" : "tomorrow ") + std::string(clock);
    }
    char day[32];
    std::strftime(day, sizeof day, "%a %e %b %H:%M", &at);
    std::string text(day);
    text.erase(std::unique(text.begin(), text.end(), [](char a, char b) { return a == ' ' && b == ' '; }),
               text.end());
    return text;
}

std::string untilText(TimePoint end, TimePoint now) {
    // To the nearest minute, as the time is shown, and at least one while it has not come: an hour's snooze
    // reads "1 h left", its last seconds "1 min left".
    const auto left = std::max(round<minutes>(end - now), minutes(1));
    return "until " + timeText(end, now) + " (" + durationText(left) + " left)";
}

LocalMinute localMinute(TimePoint t) {
    const std::tm tm = localTm(t);
    return {tm.tm_wday, tm.tm_hour * 60 + tm.tm_min};
}

} // namespace nicer::wallclock
