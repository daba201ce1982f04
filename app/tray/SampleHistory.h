#pragma once

#include "api/Sample.h"

#include <chrono>
#include <cstdint>
#include <deque>
#include <span>

namespace nicer::tray {

/// One point of the chart: a sample and the reserve band in force when it arrived (the band line is m x b).
struct ChartPoint {
    api::Sample sample;
    double reserveBand = 0.0;

    /// The idle share the controller keeps free (control::reserveKept): multiplier x band, at most the whole
    /// machine, and none while the outside signal leaves the work uncapped.
    double reserveKept() const;
};

/// The last few minutes of samples, oldest first; what the chart draws. Time is the samples' own clock.
class SampleHistory {
public:
    explicit SampleHistory(std::chrono::seconds span)
        : m_span(span) {}

    /// Replaces everything, e.g. with GetHistory's answer after (re)connecting.
    void reset(std::span<const api::Sample> samples, double reserveBand);
    /// Adds one sample; ones older than the span (before the newest) fall out. An out-of-order sample (older
    /// than the newest, e.g. a stale signal after a reset) is dropped, unless it is the start of a run of
    /// kClockJumpRun such samples in order: then the wall clock went back, and the history starts over
    /// with them rather than stay frozen until the clock has caught up.
    void append(const api::Sample& sample, double reserveBand);

    static constexpr std::size_t kClockJumpRun = 3;

    const std::deque<ChartPoint>& points() const { return m_points; }
    std::chrono::seconds span() const { return m_span; }
    bool empty() const { return m_points.empty(); }

private:
    void trim();

    std::chrono::seconds m_span;
    std::deque<ChartPoint> m_points;
    std::deque<ChartPoint> m_behind; ///< the out-of-order samples since the last in-order one
};

} // namespace nicer::tray
