#include "net/rate/RateLimiter.h"

#include "util/ByteSize.h"

#include <algorithm>
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
    const auto bytes = text::parseByteSize(text);
    if (!bytes) {
        return Error{"'" + std::string(text) +
                     "' is not a rate: give bytes per second as a positive number with an optional "
                     "suffix k, M or G (1024-based), e.g. 500k or 10M"};
    }
    const double value = *bytes;
    if (!(value >= 1.0) || !std::isfinite(value)) {
        return Error{"a rate of '" + std::string(text) + "' is too small: give at least 1 byte per second"};
    }
    return value;
}

} // namespace nicer::net
