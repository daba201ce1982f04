#include "tray/SampleHistory.h"

#include "control/Controller.h"

namespace nicer::tray {

double ChartPoint::reserveKept() const {
    return control::reserveKept(reserveBand, sample.multiplier, sample.outsideSignal, sample.quota);
}

void SampleHistory::reset(std::span<const api::Sample> samples, double reserveBand) {
    m_points.clear();
    m_behind.clear();
    for (const auto& s : samples) {
        append(s, reserveBand);
    }
}

void SampleHistory::append(const api::Sample& sample, double reserveBand) {
    if (!m_points.empty() && sample.timeUSec < m_points.back().sample.timeUSec) {
        if (!m_behind.empty() && sample.timeUSec <= m_behind.back().sample.timeUSec) {
            m_behind.clear(); // not a run in order: stale samples
        }
        m_behind.push_back({sample, reserveBand});
        if (m_behind.size() >= kClockJumpRun) {
            m_points = std::move(m_behind);
            m_behind.clear();
            trim();
        }
        return;
    }
    m_behind.clear();
    m_points.push_back({sample, reserveBand});
    trim();
}

void SampleHistory::trim() {
    const auto spanUSec = static_cast<std::uint64_t>(std::chrono::microseconds(m_span).count());
    const std::uint64_t newest = m_points.back().sample.timeUSec;
    while (newest - m_points.front().sample.timeUSec > spanUSec) {
        m_points.pop_front();
    }
}

} // namespace nicer::tray
