#pragma once

#include "util/Result.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nicer::net {

/// A token bucket that paces how fast the fetcher acknowledges received bytes (HTTP/2 flow control), so
/// that the sender keeps to a rate. Pure: the caller passes the time, so tests drive it with a fake clock.
class RateLimiter {
public:
    using TimePoint = std::chrono::steady_clock::time_point;

    /// Smallest bucket, so that a very low rate still lets whole DATA frames through.
    static constexpr double kMinBurstBytes = 16.0 * 1024;

    /// An unlimited bucket. @p burst is how long the bucket may save up tokens at the current rate (never
    /// less than kMinBurstBytes): longer gives smoother throughput, shorter a tighter cap over short spans.
    explicit RateLimiter(TimePoint now, std::chrono::milliseconds burst = std::chrono::milliseconds(100));

    /// Sets the rate in bytes per second (negative is taken as 0); nullopt removes the limit. The tokens
    /// saved so far are kept up to the new bucket size; a first limit starts with an empty bucket.
    void setRate(std::optional<double> bytesPerSecond, TimePoint now);
    /// The rate in force; nullopt when unlimited.
    std::optional<double> rate() const { return m_rate; }

    /// Takes up to @p wanted bytes' worth of tokens and returns how many it took (all of them when
    /// unlimited).
    std::uint64_t take(std::uint64_t wanted, TimePoint now);
    /// Takes @p bytes whether the bucket holds them or not: bytes that arrived anyway (e.g. released when a
    /// stream closed). The debt delays later take()s, so the average still keeps to the rate.
    void charge(std::uint64_t bytes, TimePoint now);
    /// Tokens available now (negative while in debt); only meaningful when limited.
    double available(TimePoint now);

private:
    void refill(TimePoint now);
    double capacity() const;

    std::optional<double> m_rate;
    std::chrono::milliseconds m_burst;
    double m_tokens = 0.0;
    TimePoint m_last;
};

/// Parses a rate in bytes per second as given on the command line: a byte size (text::parseByteSize, e.g.
/// "500k", "10M", "1.5M", "250000") of at least 1 byte. The error says what is accepted.
Result<double> parseByteRate(std::string_view text);

} // namespace nicer::net
