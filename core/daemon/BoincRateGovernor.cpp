#include "daemon/BoincRateGovernor.h"

#include "kernel/InterfaceTraffic.h"

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
    options.yieldAtOnce = true;
    options.probeGain = 0.25;
    options.probeInterval = std::chrono::seconds{4};
    return options;
}

BoincRateGovernor::BoincRateGovernor(const BoincRateOptions& options)
    : m_options(options)
    , m_down(options.nice)
    , m_up(options.nice) {}

std::optional<TransferLimits> BoincRateGovernor::onSample(const Sample& sample) {
    m_counter.update(sample.transfers);
    const auto link = countLinkBytes(sample.sockets);
    const auto down = m_down.onSample({sample.time, m_downOnLink, link.receiveRtt, sample.interfaceRxBytes});
    const auto up = m_up.onSample({sample.time, m_upOnLink, link.sendRtt, sample.interfaceTxBytes});
    // A controller's answer changes only when it steps; before its first step it is only the floor.
    const int steps = m_down.status().steps;
    const bool stepped = steps != m_steps;
    m_steps = steps;
    if (!stepped) {
        return std::nullopt;
    }
    // BOINC's limits bound what libcurl reads and writes; the link carries that plus what the kernel's
    // buffers take on. While BOINC's receive buffers grow (TCP autotuning lets them reach tens of MiB), its
    // sender fills them at the link's speed whatever the limit, and the user's download cannot get in. So
    // BOINC reads slower by what its buffers grew since the last step: they fill sooner, after which the
    // link carries exactly what BOINC reads. Likewise it writes slower while its send buffers grow.
    double downGrowth = 0.0;
    double upGrowth = 0.0;
    if (link.queues && m_queuesAtStep) {
        const double seconds = std::chrono::duration<double>(sample.time - m_stepTime).count();
        if (seconds > 0.0) {
            downGrowth = (link.queues->unread - m_queuesAtStep->unread) / seconds;
            upGrowth = (link.queues->unsent - m_queuesAtStep->unsent) / seconds;
        }
    }
    m_queuesAtStep = link.queues;
    m_stepTime = sample.time;
    const double floor = m_options.nice.minRate;
    m_wanted = {std::max(floor, down.value_or(floor) - std::max(downGrowth, 0.0)),
                std::max(floor, up.value_or(floor) - std::max(upGrowth, 0.0))};
    if (!worthPushing()) {
        return std::nullopt;
    }
    m_pushed = m_wanted;
    return m_wanted;
}

BoincRateGovernor::LinkTraffic
BoincRateGovernor::countLinkBytes(const std::optional<std::vector<kernel::TcpSocketInfo>>& sockets) {
    // A socket's round trip counts when it moved at least this much since the last sample: an idle
    // connection's estimate is old.
    constexpr std::uint64_t kActive = 16 * 1024;
    LinkTraffic link;
    const auto keepMin = [](std::optional<std::chrono::nanoseconds>& into, std::chrono::microseconds rtt) {
        if (rtt.count() > 0 && (!into || rtt < *into)) {
            into = rtt;
        }
    };
    if (sockets) {
        std::map<std::uint64_t, kernel::TcpSocketInfo> now;
        for (const auto& socket : *sockets) {
            now[socket.inode] = socket;
        }
        // The first sample with sockets is only the baseline; after it, a socket not seen before (a new
        // connection) counts from its first byte. One that closed since takes its last bytes with it.
        if (m_lastSockets) {
            for (const auto& [inode, socket] : now) {
                const auto before = m_lastSockets->find(inode);
                const bool known = before != m_lastSockets->end();
                const auto received =
                    kernel::counterDelta(known ? before->second.bytesReceived : 0, socket.bytesReceived);
                const auto acked =
                    kernel::counterDelta(known ? before->second.bytesAcked : 0, socket.bytesAcked);
                m_downOnLink += received;
                m_upOnLink += acked;
                if (received >= kActive) {
                    keepMin(link.receiveRtt, socket.receiveRtt);
                }
                if (acked >= kActive) {
                    keepMin(link.sendRtt, socket.rtt);
                }
            }
        }
        Queues queues;
        for (const auto& [inode, socket] : now) {
            queues.unread += socket.unread;
            queues.unsent += socket.unsent;
        }
        link.queues = queues;
        m_lastSockets = std::move(now);
    } else {
        m_lastSockets.reset();
        m_downOnLink += kernel::counterDelta(m_lastDownloaded, m_counter.downloaded());
        m_upOnLink += kernel::counterDelta(m_lastUploaded, m_counter.uploaded());
    }
    m_lastDownloaded = m_counter.downloaded();
    m_lastUploaded = m_counter.uploaded();
    return link;
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
