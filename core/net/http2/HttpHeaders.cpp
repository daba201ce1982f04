#include "net/http2/HttpHeaders.h"

#include "util/Text.h"

#include <array>
#include <ctime>
#include <limits>

namespace nicer::net {

namespace {

bool isDigits(std::string_view s) {
    if (s.empty()) {
        return false;
    }
    for (const char c : s) {
        if (c < '0' || c > '9') {
            return false;
        }
    }
    return true;
}

// The header grammars allow ASCII digits only; checking that here keeps the rule out of from_chars' hands.
std::optional<std::uint64_t> parseDigits(std::string_view s) {
    std::uint64_t value = 0;
    if (!isDigits(s) || !text::parseNumber(s, value)) {
        return std::nullopt;
    }
    return value;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        auto x = a[i];
        auto y = b[i];
        x = (x >= 'A' && x <= 'Z') ? static_cast<char>(x - 'A' + 'a') : x;
        y = (y >= 'A' && y <= 'Z') ? static_cast<char>(y - 'A' + 'a') : y;
        if (x != y) {
            return false;
        }
    }
    return true;
}

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kDays = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> kLongDays = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                       "Friday", "Saturday", "Sunday"};

int monthIndex(std::string_view name) {
    for (std::size_t i = 0; i < kMonths.size(); ++i) {
        if (name == kMonths[i]) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

template <std::size_t N>
bool isOneOf(std::string_view name, const std::array<std::string_view, N>& names) {
    for (const auto candidate : names) {
        if (name == candidate) {
            return true;
        }
    }
    return false;
}

/// Reads exactly @p width digits (or 1..width when @p exact is false) from the front of @p s.
std::optional<int> takeNumber(std::string_view& s, std::size_t width, bool exact = true) {
    std::size_t n = 0;
    while (n < s.size() && n < width && s[n] >= '0' && s[n] <= '9') {
        ++n;
    }
    if (n == 0 || (exact && n != width)) {
        return std::nullopt;
    }
    int value = 0;
    for (std::size_t i = 0; i < n; ++i) {
        value = value * 10 + (s[i] - '0');
    }
    s.remove_prefix(n);
    return value;
}

bool takeLiteral(std::string_view& s, std::string_view literal) {
    if (!s.starts_with(literal)) {
        return false;
    }
    s.remove_prefix(literal.size());
    return true;
}

std::optional<int> takeMonth(std::string_view& s) {
    if (s.size() < 3) {
        return std::nullopt;
    }
    const int month = monthIndex(s.substr(0, 3));
    if (month < 0) {
        return std::nullopt;
    }
    s.remove_prefix(3);
    return month;
}

/// "HH:MM:SS" into @p tm.
bool takeTime(std::string_view& s, std::tm& tm) {
    const auto hour = takeNumber(s, 2);
    if (!hour || !takeLiteral(s, ":")) {
        return false;
    }
    const auto minute = takeNumber(s, 2);
    if (!minute || !takeLiteral(s, ":")) {
        return false;
    }
    const auto second = takeNumber(s, 2);
    if (!second) {
        return false;
    }
    tm.tm_hour = *hour;
    tm.tm_min = *minute;
    tm.tm_sec = *second;
    return true;
}

// RFC 9110 5.6.7: a two-digit year more than 50 years in the future means the most recent past year with
// those digits.
int fullYear(int twoDigits, std::chrono::system_clock::time_point now) {
    const std::time_t nowT = std::chrono::system_clock::to_time_t(now);
    std::tm nowTm{};
    gmtime_r(&nowT, &nowTm);
    const int thisYear = nowTm.tm_year + 1900;
    int year = thisYear - thisYear % 100 + twoDigits;
    if (year > thisYear + 50) {
        year -= 100;
    }
    return year;
}

/// "Sun, 06 Nov 1994 08:49:37 GMT"
bool parseImfFixdate(std::string_view s, std::tm& tm) {
    if (s.size() < 5 || !isOneOf(s.substr(0, 3), kDays)) {
        return false;
    }
    s.remove_prefix(3);
    if (!takeLiteral(s, ", ")) {
        return false;
    }
    const auto day = takeNumber(s, 2);
    if (!day || !takeLiteral(s, " ")) {
        return false;
    }
    const auto month = takeMonth(s);
    if (!month || !takeLiteral(s, " ")) {
        return false;
    }
    const auto year = takeNumber(s, 4);
    if (!year || !takeLiteral(s, " ") || !takeTime(s, tm) || s != " GMT") {
        return false;
    }
    tm.tm_mday = *day;
    tm.tm_mon = *month;
    tm.tm_year = *year - 1900;
    return true;
}

/// "Sunday, 06-Nov-94 08:49:37 GMT"
bool parseRfc850(std::string_view s, std::tm& tm, std::chrono::system_clock::time_point now) {
    const auto comma = s.find(',');
    if (comma == std::string_view::npos || !isOneOf(s.substr(0, comma), kLongDays)) {
        return false;
    }
    s.remove_prefix(comma);
    if (!takeLiteral(s, ", ")) {
        return false;
    }
    const auto day = takeNumber(s, 2);
    if (!day || !takeLiteral(s, "-")) {
        return false;
    }
    const auto month = takeMonth(s);
    if (!month || !takeLiteral(s, "-")) {
        return false;
    }
    const auto year = takeNumber(s, 2);
    if (!year || !takeLiteral(s, " ") || !takeTime(s, tm) || s != " GMT") {
        return false;
    }
    tm.tm_mday = *day;
    tm.tm_mon = *month;
    tm.tm_year = fullYear(*year, now) - 1900;
    return true;
}

/// "Sun Nov  6 08:49:37 1994"
bool parseAsctime(std::string_view s, std::tm& tm) {
    if (s.size() < 4 || !isOneOf(s.substr(0, 3), kDays)) {
        return false;
    }
    s.remove_prefix(3);
    if (!takeLiteral(s, " ")) {
        return false;
    }
    const auto month = takeMonth(s);
    if (!month || !takeLiteral(s, " ")) {
        return false;
    }
    takeLiteral(s, " "); // a one-digit day is padded with a space
    const auto day = takeNumber(s, 2, false);
    if (!day || !takeLiteral(s, " ") || !takeTime(s, tm) || !takeLiteral(s, " ")) {
        return false;
    }
    const auto year = takeNumber(s, 4);
    if (!year || !s.empty()) {
        return false;
    }
    tm.tm_mday = *day;
    tm.tm_mon = *month;
    tm.tm_year = *year - 1900;
    return true;
}

std::optional<std::chrono::system_clock::time_point>
parseHttpDate(std::string_view s, std::chrono::system_clock::time_point now) {
    std::tm tm{};
    if (!parseImfFixdate(s, tm) && !parseRfc850(s, tm, now) && !parseAsctime(s, tm)) {
        return std::nullopt;
    }
    if (tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60) { // 60: a leap second
        return std::nullopt;
    }
    const std::tm written = tm;
    const std::time_t t = timegm(&tm);
    // timegm normalises "31 Feb" into March; such a date was never valid.
    if (t == static_cast<std::time_t>(-1) || tm.tm_mday != written.tm_mday || tm.tm_mon != written.tm_mon) {
        return std::nullopt;
    }
    return std::chrono::system_clock::from_time_t(t);
}

} // namespace

std::optional<ContentRange> parseContentRange(std::string_view value) {
    value = text::trim(value);
    const auto space = value.find(' ');
    if (space == std::string_view::npos || !equalsIgnoringCase(value.substr(0, space), "bytes")) {
        return std::nullopt;
    }
    value = value.substr(space + 1);
    const auto slash = value.find('/');
    const auto dash = value.find('-');
    if (slash == std::string_view::npos || dash == std::string_view::npos || dash > slash) {
        return std::nullopt;
    }
    const auto first = parseDigits(value.substr(0, dash));
    const auto last = parseDigits(value.substr(dash + 1, slash - dash - 1));
    if (!first || !last || *first > *last) {
        return std::nullopt;
    }
    ContentRange range{*first, *last, std::nullopt};
    const auto totalText = value.substr(slash + 1);
    if (totalText != "*") {
        range.total = parseDigits(totalText);
        if (!range.total || range.last >= *range.total) {
            return std::nullopt;
        }
    }
    return range;
}

std::optional<std::uint64_t> parseContentLength(std::string_view value) {
    std::optional<std::uint64_t> length;
    for (const auto part : text::split(value, ',')) {
        const auto number = parseDigits(text::trim(part));
        if (!number || (length && *length != *number)) {
            return std::nullopt;
        }
        length = number;
    }
    return length;
}

std::optional<std::chrono::seconds> parseRetryAfter(std::string_view value,
                                                    std::chrono::system_clock::time_point now) {
    value = text::trim(value);
    if (isDigits(value)) {
        const auto delta = parseDigits(value);
        using Rep = std::chrono::seconds::rep;
        constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<Rep>::max());
        // Only overflow makes parseDigits fail here; such a wait is "forever", and the caller bounds it.
        return std::chrono::seconds(static_cast<Rep>(delta && *delta < kMax ? *delta : kMax));
    }
    const auto date = parseHttpDate(value, now);
    if (!date) {
        return std::nullopt;
    }
    if (*date <= now) {
        return std::chrono::seconds(0);
    }
    return std::chrono::ceil<std::chrono::seconds>(*date - now);
}

} // namespace nicer::net
