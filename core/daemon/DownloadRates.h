#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace nicer::daemon {

/**
 * The download rate of each file, from successive looks at how many of its bytes are in place: the bytes
 * added over the last window, per second. The fetcher reports totals only; nicerd shows a rate per file.
 * Pure: the caller passes the time, so tests can feed any sequence.
 */
class DownloadRates {
public:
    using Clock = std::chrono::steady_clock;

    explicit DownloadRates(std::chrono::milliseconds window = std::chrono::seconds(2))
        : m_window(window) {}

    /// Records the bytes in place of every file at @p now. A different number of files than before starts
    /// the measurement over.
    void record(Clock::time_point now, const std::vector<std::uint64_t>& bytesDone);
    /// Bytes per second of file @p index over the looks of the last window before @p now; 0 without two
    /// looks in it. Bytes that went away (a part file started over) count as none, not as a negative rate.
    double rate(std::size_t index, Clock::time_point now) const;

private:
    struct Look {
        Clock::time_point time;
        std::vector<std::uint64_t> bytes;
    };

    std::chrono::milliseconds m_window;
    std::deque<Look> m_looks;
};

} // namespace nicer::daemon
