#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace nicer::net {

/// One look at the link, taken by the fetcher at a fixed interval while it downloads.
struct LinkSample {
    std::chrono::steady_clock::time_point time;
    /// Payload bytes the fetcher has received so far, over all its connections (monotonic).
    std::uint64_t receivedBytes = 0;
    /// The latest PING round trip of the busiest connection, when one completed since the last sample.
    std::optional<std::chrono::nanoseconds> rtt;
    /// Bytes received by the machine's network interfaces so far (/proc/net/dev, loopback excluded), when
    /// readable: what is not ours is the user's own traffic.
    std::optional<std::uint64_t> interfaceRxBytes;
};

/**
 * Decides how fast the fetcher may take data. The fetcher enforces the answer through HTTP/2 flow control:
 * it acknowledges (nghttp2_session_consume) only as many bytes as the rate allows, so the sender slows down.
 */
class RateController {
public:
    virtual ~RateController() = default;
    /// Feeds one sample; returns the allowed receive rate in bytes per second, or nullopt for no limit.
    virtual std::optional<double> onSample(const LinkSample& sample) = 0;
};

} // namespace nicer::net
