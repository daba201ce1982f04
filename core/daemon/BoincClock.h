#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace nicer::daemon {

/// How BoincClock keeps BOINC's clock.
struct BoincClockOptions {
    /// How long the client is stopped at a time. Longer than 10 s: the client counts a gap of more than
    /// 10 s between two of its polls as none (client/app_control.cpp, ACTIVE_TASK_SET::get_msgs). Shorter
    /// than 30 s: an app built on an older BOINC API exits when the client's heartbeat has been missing for
    /// 30 s (api/boinc_api.cpp, HEARTBEAT_GIVEUP_SECS); newer ones only check that the client lives.
    std::chrono::milliseconds stopSpan{15000};
    /// After a stop the client runs at least this long before its tasks are judged again: its next polls
    /// take the tasks' new CPU times, and nicerd's calls are answered.
    std::chrono::milliseconds window{2000};
    /// A task's elapsed time may run this share ahead of its CPU time (per CPU it uses) before the client
    /// is stopped: a task that has its CPUs to itself still spends a little of its time on I/O.
    double slack = 0.1;
    /// ... and this many seconds more (a task's start, its first checkpoint read).
    double leadSeconds = 10.0;
};

/// One of BOINC's running tasks, as the clock sees it (get_results, and get_state for its app version).
struct ClockTask {
    std::string name;
    double elapsed = 0.0; ///< BOINC's elapsed time, s
    double cpu = 0.0;     ///< its CPU time, s
    double cpus = 1.0;    ///< the CPUs its app version uses
    bool gpu = false;     ///< a GPU task: its CPU time says nothing of its progress
};

/**
 * Keeps BOINC's elapsed-time clock as fast as its tasks run. BOINC counts a running task's elapsed time by
 * the wall clock and aborts the task when that passes the work unit's bound (exit status 197), whatever
 * share of the CPU the task got: nicer's cap and the volunteer's programs would spend that margin at
 * wall-clock speed. BOINC counts nothing across a gap of more than 10 s in its own polling, so nicerd stops
 * the client (never its tasks, which go on under nicer's smooth cap) for spans of stopSpan whenever a task's
 * elapsed time has run ahead of its CPU time: BOINC then counts about as much time as its tasks computed,
 * which is how it counts under its own throttling (cpu_usage_limit scales the elapsed time).
 *
 * Pure: the session reads the tasks and stops and continues the client; this decides when.
 */
class BoincClock {
public:
    using Clock = std::chrono::steady_clock;

    explicit BoincClock(const BoincClockOptions& options = {})
        : m_options(options) {}

    /// Seconds by which BOINC's clock of @p task runs ahead of its CPU time beyond the allowance (slack and
    /// leadSeconds); positive: the clock must wait. 0 for a GPU task.
    double lead(const ClockTask& task) const;

    /**
     * Takes a reading of the running tasks at @p now and says whether the client is to stop now, for
     * stopSpan. Never while the client has run for less than window since it was last continued, nor while
     * @p busy (nicerd waits for an answer of the client's: an attach, a detach).
     */
    bool onTasks(Clock::time_point now, const std::vector<ClockTask>& running, bool busy);
    /// The client was stopped, or continued, at @p now.
    void stopped(Clock::time_point now);
    void continued(Clock::time_point now);

    bool isStopped() const { return m_stopped; }
    const BoincClockOptions& options() const { return m_options; }

    /// How far back the shares below look.
    static constexpr std::chrono::seconds kHistory{60};

    /// The share of the last kHistory that the client ran (BOINC's clock counted): 1 when it never stopped.
    double countedShare(Clock::time_point now) const;
    /// The CPU the running CPU tasks got over the last kHistory, as a share of the CPUs they use; negative
    /// when not known (no two readings of a task).
    double taskSpeed() const;
    /// For people: "" when the client has not been stopped over the last kHistory, else e.g. "kept: BOINC
    /// counted 24% of the last minute; its tasks ran at 22% of their CPUs".
    std::string describe(Clock::time_point now) const;

private:
    struct Span {
        Clock::time_point from;
        Clock::time_point to; ///< == from while it lasts
    };
    struct Progress {
        Clock::time_point time;
        double cpu = 0.0;      ///< CPU seconds the tasks gained since the reading before
        double capacity = 0.0; ///< CPU seconds they could have had: wall seconds x their CPUs
    };
    void forget(Clock::time_point now);

    BoincClockOptions m_options;
    bool m_stopped = false;
    Clock::time_point m_continuedAt{};
    std::deque<Span> m_stops;
    std::deque<Progress> m_progress;
    /// Each task's last reading: time, CPU seconds.
    std::map<std::string, std::pair<Clock::time_point, double>> m_last;
};

} // namespace nicer::daemon
