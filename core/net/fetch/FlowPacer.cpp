#include "net/fetch/FlowPacer.h"

#include "kernel/InterfaceTraffic.h"
#include "net/rate/RateController.h"

#include <algorithm>

namespace nicer::net {

namespace {

using namespace std::chrono_literals;

// With a rate limit the windows shrink to about rate x max(2 RTT, this), so the server can never run more
// than that far ahead of what the rate allows. 25 ms: a half-window burst then queues no more than the nice
// mode's delay target (bench/net measured 100 ms windows making up to 50 ms of self-made queue).
constexpr auto kMinWindowTime = 25ms;
// Smaller windows would cut DATA frames (16 KiB by default) into pieces.
constexpr std::uint32_t kMinWindow = 64 * 1024;
// Windows are changed only when the target moves by more than this factor, not on every sample.
constexpr double kWindowHysteresis = 1.25;
// Current rate: received bytes over this much recent time.
constexpr auto kRateWindow = 1s;

} // namespace

FlowPacer::FlowPacer(const FetcherOptions& options, Now now)
    : m_now(now ? std::move(now) : Now([] { return Clock::now(); }))
    , m_maxRate(options.maxRate)
    , m_rateController(options.rateController)
    , m_session(options.session)
    , m_sampleInterval(options.sampleInterval)
    , m_pacingInterval(options.pacingInterval)
    , m_procNetDev(options.procNetDev)
    , m_limiter(m_now()) {}

void FlowPacer::start() {
    const auto now = m_now();
    m_lastSample = now;
    m_rateWindow.clear();
    m_rateWindow.emplace_back(now, m_received);
    applyRate(allowedRate(now), now);
}

bool FlowPacer::manualFlowControl() const {
    return m_maxRate.has_value() || m_rateController != nullptr;
}

std::uint32_t FlowPacer::connectionWindow() const {
    return m_windowTarget != 0 ? m_windowTarget : m_session.connectionWindow;
}

std::uint32_t FlowPacer::streamWindow() const {
    return m_windowTarget != 0 ? std::min(m_windowTarget, m_session.streamWindow) : m_session.streamWindow;
}

Http2Session::Options FlowPacer::sessionOptions() const {
    Http2Session::Options options = m_session;
    options.manualFlowControl = manualFlowControl();
    options.connectionWindow = connectionWindow();
    options.streamWindow = streamWindow();
    return options;
}

std::chrono::milliseconds FlowPacer::tickInterval() const {
    return m_limiter.rate() ? std::min(m_pacingInterval, m_sampleInterval) : m_sampleInterval;
}

bool FlowPacer::sampleDue() const {
    return m_now() - m_lastSample >= m_sampleInterval;
}

void FlowPacer::charge(std::uint64_t n) {
    if (n > 0) {
        m_limiter.charge(n, m_now());
    }
}

std::uint64_t FlowPacer::take(std::uint64_t wanted) {
    return m_limiter.take(wanted, m_now());
}

std::vector<std::size_t> FlowPacer::share(const std::vector<std::size_t>& pending) {
    std::vector<std::size_t> shares(pending.size(), 0);
    std::uint64_t total = 0;
    for (const std::size_t n : pending) {
        total += n;
    }
    if (total == 0) {
        return shares;
    }
    std::uint64_t granted = take(total);
    const std::size_t start = m_cursor++ % pending.size();
    for (std::size_t i = 0; i < pending.size() && granted > 0; ++i) {
        const std::size_t k = (start + i) % pending.size();
        shares[k] = static_cast<std::size_t>(std::min<std::uint64_t>(pending[k], granted));
        granted -= shares[k];
    }
    return shares;
}

void FlowPacer::onRtt(std::chrono::nanoseconds rtt) {
    // Windows follow the smallest RTT seen: the latest includes the queue this download builds itself, and
    // windows sized from it would grow with the queue they cause.
    m_lastRtt = m_lastRtt ? std::min(*m_lastRtt, rtt) : rtt;
    m_newRtt = rtt;
}

std::optional<double> FlowPacer::allowedRate(Clock::time_point now) {
    std::optional<double> rate = m_maxRate;
    if (m_rateController) {
        LinkSample link;
        link.time = now;
        link.receivedBytes = m_received;
        link.rtt = std::exchange(m_newRtt, std::nullopt);
        if (auto rx = kernel::totalReceivedBytes(m_procNetDev); rx) {
            link.interfaceRxBytes = *rx;
        }
        if (const auto nice = m_rateController->onSample(link)) {
            rate = rate ? std::min(*rate, *nice) : *nice;
        }
    }
    return rate;
}

bool FlowPacer::applyRate(std::optional<double> rate, Clock::time_point now) {
    m_limiter.setRate(rate, now);
    std::uint32_t target = 0;
    if (rate) {
        const auto rtt = m_lastRtt.value_or(std::chrono::nanoseconds(0));
        const double seconds = std::max(std::chrono::duration<double>(2 * rtt).count(),
                                        std::chrono::duration<double>(kMinWindowTime).count());
        const double wanted = std::clamp(*rate * seconds, static_cast<double>(kMinWindow),
                                         static_cast<double>(m_session.connectionWindow));
        target = static_cast<std::uint32_t>(wanted);
    }
    const bool change = (target == 0) != (m_windowTarget == 0) ||
                        (target != 0 && (target > m_windowTarget * kWindowHysteresis ||
                                         target * kWindowHysteresis < m_windowTarget));
    if (change) {
        m_windowTarget = target;
    }
    return change;
}

bool FlowPacer::sample() {
    const auto now = m_now();
    m_lastSample = now;
    bool changed = false;
    if (m_rateController) {
        changed = applyRate(allowedRate(now), now);
    }
    m_rateWindow.emplace_back(now, m_received);
    while (m_rateWindow.size() > 2 && now - m_rateWindow.front().first > kRateWindow) {
        m_rateWindow.pop_front();
    }
    const auto span = std::chrono::duration<double>(now - m_rateWindow.front().first).count();
    m_currentRate = span > 0 ? static_cast<double>(m_received - m_rateWindow.front().second) / span : 0.0;
    return changed;
}

} // namespace nicer::net
