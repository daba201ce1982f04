#include "net/rate/RateLimiter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

namespace nicer::net {

RateLimiter::RateLimiter(TimePoint now, std::chrono::milliseconds burst)
    : m_burst(std::max(burst, std::chrono::milliseconds(1)))
    , m_last(now) {}

double RateLimiter::capacity() const {
    const double seconds = std::chrono::duration<double>(m_burst).count();
    return std::max(kMinBurstBytes, m_rate.value_or(0.0) * seconds);
}

void RateLimiter::refill(TimePoint now) {
    // A clock that goes backwards (it should not) must not drain the bucket.
    if (now <= m_last) {
        return;
    }
    const double seconds = std::chrono::duration<double>(now - m_last).count();
    m_last = now;
    if (m_rate) {
        m_tokens = std::min(capacity(), m_tokens + *m_rate * seconds);
    }
}

void RateLimiter::setRate(std::optional<double> bytesPerSecond, TimePoint now) {
    refill(now);
    if (!bytesPerSecond) {
        m_rate.reset();
        m_tokens = 0.0;
        return;
    }
    const bool wasUnlimited = !m_rate;
    m_rate = std::max(0.0, *bytesPerSecond);
    // Coming from "unlimited", nothing was saved: start empty so the cap holds from the first moment.
    m_tokens = wasUnlimited ? 0.0 : std::min(m_tokens, capacity());
}

std::uint64_t RateLimiter::take(std::uint64_t wanted, TimePoint now) {
    if (!m_rate) {
        return wanted;
    }
    refill(now);
    if (m_tokens < 1.0) {
        return 0;
    }
    const auto granted = std::min<std::uint64_t>(wanted, static_cast<std::uint64_t>(std::floor(m_tokens)));
    m_tokens -= static_cast<double>(granted);
    return granted;
}

void RateLimiter::charge(std::uint64_t bytes, TimePoint now) {
    if (!m_rate) {
        return;
    }
    refill(now);
    m_tokens -= static_cast<double>(bytes);
}

double RateLimiter::available(TimePoint now) {
    refill(now);
    return m_tokens;
}

Result<double> parseByteRate(std::string_view text) {
    const auto bad = [&] {
        return Error{"'" + std::string(text) +
                     "' is not a rate: give bytes per second as a positive number with an optional "
                     "suffix k, M or G (1024-based), e.g. 500k or 10M"};
    };
    std::size_t digits = 0;
    bool dot = false;
    while (digits < text.size() &&
           ((text[digits] >= '0' && text[digits] <= '9') || (text[digits] == '.' && !dot))) {
        dot = dot || text[digits] == '.';
        ++digits;
    }
    const std::string number(text.substr(0, digits));
    if (number.empty() || number == ".") {
        return bad();
    }
    std::string_view suffix = text.substr(digits);
    double multiplier = 1.0;
    if (!suffix.empty()) {
        switch (suffix.front()) {
        case 'k':
        case 'K':
            multiplier = 1024.0;
            break;
        case 'm':
        case 'M':
            multiplier = 1024.0 * 1024.0;
            break;
        case 'g':
        case 'G':
            multiplier = 1024.0 * 1024.0 * 1024.0;
            break;
        case 'b':
        case 'B':
            break;
        default:
            return bad();
        }
        if (multiplier > 1.0) {
            suffix.remove_prefix(1);
        }
        if (!(suffix.empty() || suffix == "B" || suffix == "b" || (multiplier > 1.0 && suffix == "iB"))) {
            return bad();
        }
    }
    double parsed = 0.0;
    // from_chars: independent of the locale's decimal separator, unlike strtod.
    if (const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), parsed);
        ec != std::errc{} || end != number.data() + number.size()) {
        return bad();
    }
    const double value = parsed * multiplier;
    if (!(value >= 1.0) || !std::isfinite(value)) {
        return Error{"a rate of '" + std::string(text) + "' is too small: give at least 1 byte per second"};
    }
    return value;
}

} // namespace nicer::net
