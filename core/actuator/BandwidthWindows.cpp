#include "actuator/BandwidthWindows.h"

#include <cstdlib>

namespace nicer::actuator {

namespace {
constexpr std::chrono::microseconds kLongestWindow{1'000'000}; // the kernel's max_cfs_quota_period
} // namespace

std::chrono::microseconds windowForPeriod(std::chrono::microseconds period) {
    if (period <= kLongestWindow) {
        return period;
    }
    const auto parts = (period.count() + kLongestWindow.count() - 1) / kLongestWindow.count();
    return std::chrono::microseconds(period.count() / parts);
}

bool periodStartsWindows(std::chrono::microseconds period, std::chrono::microseconds window) {
    if (window.count() <= 0 || period < window) {
        return false;
    }
    // Within 1 µs per window: a period split into windows may lose a microsecond to the division.
    const auto windows = (period.count() + window.count() / 2) / window.count();
    return std::llabs(period.count() - windows * window.count()) <= windows;
}

bool WindowStartProbe::observe(Time at, std::uint64_t windows) {
    if (m_lastAt && windows != m_lastCount && at > *m_lastAt) {
        m_start = at;
    }
    m_lastAt = at;
    m_lastCount = windows;
    return m_start.has_value();
}

std::chrono::microseconds nearestWindowStart(std::chrono::microseconds knownStart,
                                             std::chrono::microseconds window,
                                             std::chrono::microseconds time) {
    using Time = std::chrono::microseconds;
    const auto w = window.count();
    auto offset = (time - knownStart).count() % w;
    if (offset < 0) {
        offset += w;
    }
    return offset <= w / 2 ? time - Time(offset) : time + Time(w - offset);
}

} // namespace nicer::actuator
