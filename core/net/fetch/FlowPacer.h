#pragma once

#include "net/fetch/FetcherOptions.h"
#include "net/http2/Http2Session.h"
#include "net/rate/RateLimiter.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace nicer::net {

/**
 * The fetcher's flow control: the receive rate allowed (maxRate, or the nice mode's answer), the token bucket
 * that paces acknowledgements to it, the HTTP/2 windows sized from rate and RTT, and the measured receive
 * rate. No I/O and no clock of its own: time comes from the injected clock, so tests drive it from memory.
 */
class FlowPacer {
public:
    using Clock = std::chrono::steady_clock;
    using Now = std::function<Clock::time_point()>;

    /// Reads maxRate, rateController, session windows, sampleInterval, pacingInterval and procNetDev of
    /// @p options (the rate controller must outlive it). @p now is the clock (steady_clock::now by default).
    explicit FlowPacer(const FetcherOptions& options, Now now = {});

    Clock::time_point now() const { return m_now(); }

    /// Starts the clocks and asks the rate controller once, so that no full-size window goes out before
    /// the first sample.
    void start();
    /// The rate limit or the nice mode applies: bytes are acknowledged by pace(), not by the session.
    bool manualFlowControl() const;
    /// The windows in force: the session's defaults, or about rate x max(2 RTT, 25 ms) while limited.
    std::uint32_t connectionWindow() const;
    std::uint32_t streamWindow() const;
    /// The session options for a new connection, with the windows in force.
    Http2Session::Options sessionOptions() const;
    /// Windows smaller than the defaults apply (a stream that starts gets them set explicitly).
    bool windowsShrunk() const { return m_windowTarget != 0; }

    /// How long until the next tick: the pacing interval while limited, else the sample interval.
    std::chrono::milliseconds tickInterval() const;
    /// A sample is due (sampleInterval since the last one).
    bool sampleDue() const;
    /// Takes a sample: asks the rate controller (when there is one) and updates the current rate. True when
    /// the windows changed, so the connections need the new ones.
    bool sample();

    /// @p n body bytes arrived.
    void received(std::size_t n) { m_received += n; }
    /// Bytes that arrived anyway (discarded, or released when a stream closed): they count against the rate.
    void charge(std::uint64_t n);
    /// How many of @p wanted bytes may be acknowledged now (all of them when unlimited).
    std::uint64_t take(std::uint64_t wanted);
    /// Shares what the bucket allows now among streams with @p pending unacknowledged bytes each, round robin
    /// from a cursor that moves every call so none starves. The result has one entry per stream.
    std::vector<std::size_t> share(const std::vector<std::size_t>& pending);
    /// A PING came back after @p rtt.
    void onRtt(std::chrono::nanoseconds rtt);

    std::optional<double> rateLimit() const { return m_limiter.rate(); }
    /// Received body bytes per second over the last second or so.
    double currentRate() const { return m_currentRate; }
    std::uint64_t receivedBytes() const { return m_received; }

private:
    std::optional<double> allowedRate(Clock::time_point now);
    bool applyRate(std::optional<double> rate, Clock::time_point now);

    Now m_now;
    std::optional<double> m_maxRate;
    RateController* m_rateController;
    Http2Session::Options m_session;
    std::chrono::milliseconds m_sampleInterval;
    std::chrono::milliseconds m_pacingInterval;
    std::filesystem::path m_procNetDev;

    RateLimiter m_limiter;
    std::uint32_t m_windowTarget = 0; // the windows in force while limited; 0 when unlimited
    std::optional<std::chrono::nanoseconds> m_lastRtt;
    std::optional<std::chrono::nanoseconds> m_newRtt; // since the last sample
    std::uint64_t m_received = 0;
    std::deque<std::pair<Clock::time_point, std::uint64_t>> m_rateWindow;
    Clock::time_point m_lastSample;
    double m_currentRate = 0.0;
    std::size_t m_cursor = 0;
};

} // namespace nicer::net
