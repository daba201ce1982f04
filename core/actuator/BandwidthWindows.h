#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace nicer::actuator {

/*
 * The kernel enforces a CPU quota over windows of a fixed length (the CPU bandwidth period) and refills the
 * work's budget at the start of each window; it also refills it whenever the quota is written. A quota
 * written in the middle of a window therefore lets the work have up to two budgets in that window (with 1 s
 * windows, a BOINC task took 0.40 of the machine under a mean quota of 0.23). nicerd avoids that by making
 * its quota changes at the start of a window: its period is a whole number of windows, and its ticks are
 * put where the kernel starts them, found from the kernel's count of windows (cpu.stat nr_periods).
 */

/// The window for a controller period: the period itself, up to the kernel's longest window (1 s); a longer
/// period is split into the fewest equal windows of at most 1 s, so that every period starts a window.
std::chrono::microseconds windowForPeriod(std::chrono::microseconds period);

/// True when @p period is a whole number of @p window: then every tick of the period can start a window.
bool periodStartsWindows(std::chrono::microseconds period, std::chrono::microseconds window);

/// The start of a window nearest to @p time, given one window start @p knownStart (all on one clock).
std::chrono::microseconds nearestWindowStart(std::chrono::microseconds knownStart,
                                             std::chrono::microseconds window,
                                             std::chrono::microseconds time);

/**
 * Finds when the kernel starts its windows, from readings of its window count taken a few milliseconds
 * apart: a window started between the last reading with the old count and the first with a new one. Pure
 * (the caller reads the count and the clock), so the rule is unit tested.
 */
class WindowStartProbe {
public:
    /// The clock's time: microseconds on CLOCK_MONOTONIC, the clock of the kernel's timer.
    using Time = std::chrono::microseconds;

    /// One reading: the kernel had started @p windows windows at @p at. Returns true once a start is known.
    bool observe(Time at, std::uint64_t windows);
    /// A time at which a window started: the first reading that saw it, so at most one reading interval
    /// late. Set once observe() returned true.
    std::optional<Time> windowStart() const { return m_start; }

private:
    std::optional<Time> m_lastAt;
    std::uint64_t m_lastCount = 0;
    std::optional<Time> m_start;
};

} // namespace nicer::actuator
