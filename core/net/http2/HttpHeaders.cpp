#include "net/http2/HttpHeaders.h"

#include "util/Text.h"

#include <algorithm>
#include <array>
#include <ctime>
#include <limits>
#include <locale.h>
#include <regex>
#include <string>
#include <time.h>

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

// strptime reads day and month names in the thread's locale, and HTTP's are English: parse in the "C" locale
// for the scope of this object, then put the thread's locale back.
class CLocaleScope {
public:
    CLocaleScope()
        : m_c(newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr)))
        , m_previous(m_c != static_cast<locale_t>(nullptr) ? uselocale(m_c)
                                                           : static_cast<locale_t>(nullptr)) {}
    ~CLocaleScope() {
        if (active()) {
            uselocale(m_previous);
            freelocale(m_c);
        }
    }
    CLocaleScope(const CLocaleScope&) = delete;
    CLocaleScope& operator=(const CLocaleScope&) = delete;

    bool active() const { return m_c != static_cast<locale_t>(nullptr); }

private:
    locale_t m_c;
    locale_t m_previous;
};

// RFC 9110 5.6.7's three forms. The shape is the RFC's policy (case-sensitive names, fixed-width numbers:
// strptime alone would take "nov", "6" or a year "94"); strptime reads the fields and checks their ranges.
struct HttpDateForm {
    std::regex shape;
    const char* format;
    bool twoDigitYear;
};

const std::array<HttpDateForm, 3>& httpDateForms() {
    static const std::array<HttpDateForm, 3> forms = {{
        // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
        {std::regex(R"([A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)"),
         "%a, %d %b %Y %H:%M:%S GMT", false},
        // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"
        {std::regex(R"([A-Z][a-z]{5,8}, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT)"),
         "%A, %d-%b-%y %H:%M:%S GMT", true},
        // asctime: "Sun Nov  6 08:49:37 1994" (a one-digit day padded with a space)
        {std::regex(R"([A-Z][a-z]{2} [A-Z][a-z]{2}  ?\d{1,2} \d{2}:\d{2}:\d{2} \d{4})"),
         "%a %b %e %H:%M:%S %Y", false},
    }};
    return forms;
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

// In whole seconds: system_clock's nanoseconds end in 2262 (and start in 1677), and four digits reach 9999.
using Seconds = std::chrono::time_point<std::chrono::system_clock, std::chrono::seconds>;

std::optional<Seconds> parseHttpDate(std::string_view s, std::chrono::system_clock::time_point now) {
    const std::string text(s); // strptime wants a terminated string
    const CLocaleScope cLocale;
    if (!cLocale.active()) {
        return std::nullopt;
    }
    for (const auto& form : httpDateForms()) {
        if (!std::regex_match(text, form.shape)) {
            continue;
        }
        std::tm tm{};
        const char* end = strptime(text.c_str(), form.format, &tm);
        if (end == nullptr || *end != '\0' || tm.tm_sec > 60) { // strptime allows 61; 60 is a leap second
            return std::nullopt;
        }
        if (form.twoDigitYear) {
            tm.tm_year = fullYear(tm.tm_year % 100, now) - 1900;
        }
        const std::tm written = tm;
        const std::time_t t = timegm(&tm);
        // timegm normalises "31 Feb" into March; such a date was never valid.
        if (t == static_cast<std::time_t>(-1) || tm.tm_mday != written.tm_mday ||
            tm.tm_mon != written.tm_mon) {
            return std::nullopt;
        }
        return Seconds(std::chrono::seconds(t));
    }
    return std::nullopt;
}

} // namespace

std::optional<ContentRange> parseContentRange(std::string_view value) {
    value = text::trim(value);
    const auto space = value.find(' ');
    if (space == std::string_view::npos || text::toLowerAscii(value.substr(0, space)) != "bytes") {
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
    // The date is a whole second, so the wait rounded up is the date less now rounded down.
    const auto wait = *date - std::chrono::floor<std::chrono::seconds>(now);
    return std::max(wait, std::chrono::seconds(0));
}

} // namespace nicer::net
