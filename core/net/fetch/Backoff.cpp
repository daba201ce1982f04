#include "net/fetch/Backoff.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>

namespace nicer::net {

Backoff::Backoff(std::chrono::milliseconds base, std::chrono::milliseconds cap,
                 std::function<double()> uniform01)
    : m_base(std::max(base, std::chrono::milliseconds(1)))
    , m_cap(std::max(cap, m_base))
    , m_uniform01(std::move(uniform01)) {}

std::chrono::milliseconds Backoff::next() {
    // Double step by step so that many failed attempts saturate at the cap instead of overflowing.
    auto ceiling = m_base;
    for (int i = 0; i < m_attempts && ceiling < m_cap; ++i) {
        ceiling = ceiling > m_cap / 2 ? m_cap : ceiling * 2;
    }
    ceiling = std::min(ceiling, m_cap);
    ++m_attempts;

    // Half, rounded up so that a 1 ms ceiling still waits 1 ms (without the +1 that overflows at the
    // maximum).
    const auto low = ceiling.count() / 2 + ceiling.count() % 2;
    const auto span = ceiling.count() - low;
    const double u = std::clamp(m_uniform01(), 0.0, 1.0);
    // min: near the top of the range, double rounding can land one above span.
    const auto offset = std::min<std::int64_t>(span, std::llround(u * static_cast<double>(span)));
    return std::chrono::milliseconds(low + offset);
}

void Backoff::reset() {
    m_attempts = 0;
}

std::chrono::milliseconds retryDelay(std::chrono::milliseconds backoff,
                                     std::optional<std::chrono::seconds> retryAfter) {
    if (!retryAfter) {
        return backoff;
    }
    // Compare in seconds first: a saturated Retry-After would overflow when converted to milliseconds.
    const auto bounded = *retryAfter >= std::chrono::duration_cast<std::chrono::seconds>(kMaxRetryAfter)
                             ? kMaxRetryAfter
                             : std::chrono::milliseconds(*retryAfter);
    return std::max(backoff, bounded);
}

std::function<double()> makeUniform01() {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    return [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
}

} // namespace nicer::net
