#include "daemon/BoincRates.h"

#include <algorithm>
#include <cmath>

namespace nicer::daemon {

void TransferCounter::update(const std::vector<api::BoincTransfer>& transfers) {
    std::map<std::pair<std::string, bool>, double> seen;
    for (const auto& t : transfers) {
        const auto key = std::make_pair(t.name, t.upload);
        const auto before = m_seen.find(key);
        double moved = 0.0;
        if (before != m_seen.end() && t.bytesDone > before->second) {
            moved = t.bytesDone - before->second;
        }
        (t.upload ? m_up : m_down) += static_cast<std::uint64_t>(std::llround(moved));
        // A restart from zero keeps the high-water mark, so the bytes moved again are not counted twice.
        seen[key] = before != m_seen.end() ? std::max(before->second, t.bytesDone) : t.bytesDone;
    }
    m_seen = std::move(seen);
}

net::NiceRateOptions boincNiceRateOptions() {
    net::NiceRateOptions options;
    options.reserve.period = std::chrono::milliseconds{2000};
    return options;
}

BoincRateGovernor::BoincRateGovernor(const BoincRateOptions& options)
    : m_options(options)
    , m_down(options.nice)
    , m_up(options.nice) {}

std::optional<TransferLimits> BoincRateGovernor::onSample(const Sample& sample) {
    m_counter.update(sample.transfers);
    countLinkBytes(sample.queues);
    const auto down = m_down.onSample({sample.time, m_downOnLink, std::nullopt, sample.interfaceRxBytes});
    const auto up = m_up.onSample({sample.time, m_upOnLink, std::nullopt, sample.interfaceTxBytes});
    m_wanted = {down.value_or(0.0), up.value_or(0.0)};
    // A controller's answer changes only when it steps; before its first step it is only the floor.
    const int steps = m_down.status().steps;
    const bool stepped = steps != m_steps;
    m_steps = steps;
    if (!stepped || !worthPushing()) {
        return std::nullopt;
    }
    m_pushed = m_wanted;
    return m_wanted;
}

void BoincRateGovernor::countLinkBytes(const std::optional<net::SocketQueues>& queues) {
    // Received: read by BOINC, plus what waits unread in its sockets. Sent: written by BOINC, less what waits
    // unsent. The queues count from where they were at the last sample; when they appear or vanish (BOINC's
    // processes unreadable for a moment) that sample goes by the transfer counters alone.
    const auto signedDelta = [](std::uint64_t before, std::uint64_t after) {
        return static_cast<double>(after) - static_cast<double>(before);
    };
    double down = signedDelta(m_lastDownloaded, m_counter.downloaded());
    double up = signedDelta(m_lastUploaded, m_counter.uploaded());
    if (queues && m_lastQueues) {
        down += signedDelta(m_lastQueues->unread, queues->unread);
        up -= signedDelta(m_lastQueues->unsent, queues->unsent);
    }
    // A socket that closed with data unread takes its queue away; that is no traffic in reverse.
    m_downOnLink += static_cast<std::uint64_t>(std::llround(std::max(down, 0.0)));
    m_upOnLink += static_cast<std::uint64_t>(std::llround(std::max(up, 0.0)));
    m_lastDownloaded = m_counter.downloaded();
    m_lastUploaded = m_counter.uploaded();
    m_lastQueues = queues;
}

bool BoincRateGovernor::worthPushing() const {
    if (!m_pushed) {
        return true;
    }
    const auto change = [](double from, double to) {
        return from > 0 ? std::abs(to - from) / from : (to > 0 ? 1.0 : 0.0);
    };
    return change(m_pushed->down, m_wanted.down) > m_options.hysteresis ||
           change(m_pushed->up, m_wanted.up) > m_options.hysteresis;
}

} // namespace nicer::daemon
