#include "daemon/DownloadRates.h"

namespace nicer::daemon {

namespace {

// Looks closer together than this add nothing but memory: the observer calls about every 100 ms, a client
// may read in between.
constexpr std::chrono::milliseconds kMinSpacing{50};

} // namespace

void DownloadRates::record(Clock::time_point now, const std::vector<std::uint64_t>& bytesDone) {
    if (!m_looks.empty() && m_looks.back().bytes.size() != bytesDone.size()) {
        m_looks.clear();
    }
    if (!m_looks.empty() && now - m_looks.back().time < kMinSpacing) {
        m_looks.back().bytes = bytesDone; // the newest state, at the time of the previous look
    } else {
        m_looks.push_back({now, bytesDone});
    }
    while (!m_looks.empty() && now - m_looks.front().time > m_window) {
        m_looks.pop_front();
    }
}

double DownloadRates::rate(std::size_t index, Clock::time_point now) const {
    const Look* first = nullptr;
    for (const auto& look : m_looks) {
        if (now - look.time <= m_window) {
            first = &look;
            break;
        }
    }
    if (!first || first == &m_looks.back() || index >= first->bytes.size()) {
        return 0.0;
    }
    const Look& last = m_looks.back();
    const double seconds = std::chrono::duration<double>(last.time - first->time).count();
    if (seconds <= 0.0 || last.bytes[index] <= first->bytes[index]) {
        return 0.0;
    }
    return static_cast<double>(last.bytes[index] - first->bytes[index]) / seconds;
}

} // namespace nicer::daemon
