#pragma once

#include <chrono>
#include <functional>
#include <optional>

namespace nicer::net {

/// Retry-After is honoured above the backoff cap, but no server may park a download for longer than this.
inline constexpr std::chrono::milliseconds kMaxRetryAfter = std::chrono::hours(1);

/// Exponential backoff with "equal jitter": retry n waits a uniform time in [d/2, d] with d = min(cap,
/// base*2^n), so retries spread out without ever being immediate.
class Backoff {
public:
    /// @p uniform01 returns values in [0, 1) (values outside are clamped); tests inject a fixed sequence.
    /// A @p base below 1 ms is taken as 1 ms and a @p cap below base as base.
    Backoff(std::chrono::milliseconds base, std::chrono::milliseconds cap, std::function<double()> uniform01);

    /// The wait before the next retry; each call counts one attempt.
    std::chrono::milliseconds next();
    /// Starts over from base, after a success.
    void reset();
    /// The number of waits handed out since construction or the last reset.
    int attempts() const { return m_attempts; }

private:
    std::chrono::milliseconds m_base;
    std::chrono::milliseconds m_cap;
    std::function<double()> m_uniform01;
    int m_attempts = 0;
};

/// The wait before a retry when the server may have sent Retry-After: the longer of @p backoff and
/// @p retryAfter, with @p retryAfter bounded by kMaxRetryAfter.
std::chrono::milliseconds retryDelay(std::chrono::milliseconds backoff,
                                     std::optional<std::chrono::seconds> retryAfter);

/// A uniform [0, 1) source seeded from std::random_device, for real use of Backoff.
std::function<double()> makeUniform01();

} // namespace nicer::net
