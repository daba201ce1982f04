#pragma once

#include "api/DaemonState.h"
#include "usermanager/UnitManager.h"
#include "workload/WorkloadSpec.h"

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace nicer::workload {

/// The work's instances are PREFIX-1.service, PREFIX-2.service and so on.
inline constexpr const char* kWorkUnitPrefix = "nicer-work";

/**
 * Runs the volunteer work as N transient services in nicer's slice and keeps them running: a dead instance
 * is started again after a backoff that doubles while it keeps dying young (1 s up to 5 min).
 *
 * Every unit it starts BindsTo= the daemon's own unit, so that when the daemon dies (even by kill -9)
 * systemd stops the work instead of leaving it running uncontrolled.
 */
class WorkloadSupervisor {
public:
    using Clock = std::chrono::steady_clock;

    static constexpr std::chrono::seconds kFirstBackoff{1};
    static constexpr std::chrono::seconds kMaxBackoff{300};
    static constexpr std::chrono::seconds kStableRun{60}; ///< a run this long resets the backoff

    struct Instance {
        std::string unit;
        usermanager::UnitState state = usermanager::UnitState::Inactive; ///< its ActiveState at the last poll
        int restarts = 0;
        Clock::time_point startedAt{};
        std::chrono::seconds backoff = kFirstBackoff;
        std::optional<Clock::time_point> restartAt; ///< set while dead and waiting for its backoff
        /// How limitRunning() holds it: frozen (FreezeUnit, or its leaf's cgroup.freeze), or stopped with
        /// SIGSTOP where the manager cannot freeze a unit (a hybrid cgroup tree); a new start is not held.
        enum class Hold { None, Frozen, Stopped } hold = Hold::None;
        /// Ended by keepEnded() to free its memory, and not started again until the count allows it.
        bool ended = false;
    };

    /// @p bindTo is the daemon's own unit (may be empty where there is none: then nothing is bound).
    WorkloadSupervisor(usermanager::UnitManager& units, WorkloadSpec spec, std::string slice,
                       std::string bindTo, std::string unitPrefix = kWorkUnitPrefix);

    /// Starts every instance; the command must resolve to an executable (searched in @p pathVariable).
    Result<void> start(Clock::time_point now, const std::string& pathVariable);
    /// Looks at each instance and starts the dead ones whose backoff has passed, and holds them to
    /// limitRunning()'s count. Returns the first error.
    Result<void> poll(Clock::time_point now);
    /**
     * At most @p count instances run from the next poll() on (0: all of them, as at the start): the last ones
     * are frozen (FreezeUnit; the leaf's cgroup.freeze in the root idle slice), or stopped with SIGSTOP every
     * period where the manager cannot freeze a unit, keeping their memory and their progress, and go on
     * where they stopped when the count allows them again. An instance started again after it died is held
     * as well.
     */
    void limitRunning(int count) { m_runningLimit = count; }
    /// The instances that run now: not frozen by limitRunning().
    int running() const;
    /**
     * The last @p count instances are ended from the next poll() on, and stay ended, to free their memory
     * (the memory rule, where a frozen task would keep it): each is thawed first, so that it can act on the
     * stop signal and save its progress. Each starts again, one more at a time, as the count falls.
     */
    void keepEnded(int count) { m_endedCount = count; }
    /// The instances keepEnded() holds ended now.
    int ended() const;
    /**
     * Replaces the running instances by those of @p spec, in the same slice and bound to the same unit;
     * adopted scopes are not the workload and stay. The new command is found first, so that nothing changes
     * when it is missing; when the new instances do not start, the previous workload is started again.
     */
    Result<void> switchTo(WorkloadSpec spec, Clock::time_point now, const std::string& pathVariable);
    /// Stops every instance and adopted scope, waiting for systemd to finish.
    Result<void> stop();
    /// Moves running processes of this user into a scope in the slice, under the same control.
    Result<void> adopt(const std::vector<pid_t>& pids);

    const WorkloadSpec& spec() const { return m_spec; }
    /// Its part of the daemon's state: the work's command, preset, instances and whether it is the demo.
    void describe(api::DaemonState& state) const;
    const std::vector<Instance>& instances() const { return m_instances; }

private:
    static Result<std::string> executableFor(const WorkloadSpec& spec, const std::string& pathVariable);
    Result<void> startInstances(Clock::time_point now);
    Result<void> startInstance(Instance& instance, Clock::time_point now);
    Result<void> stopInstances();
    /// Holds the instances past m_runningLimit and lets the others run; the first error.
    Result<void> holdToLimit();
    /// Ends the last m_endedCount instances; the first error.
    Result<void> endToCount();
    /// Lets go of @p instance's hold (thawed, or continued), so that it can act on a stop signal.
    void release(Instance& instance);

    usermanager::UnitManager& m_units;
    WorkloadSpec m_spec;
    std::string m_slice;
    std::string m_bindTo;
    std::string m_unitPrefix;
    std::string m_executable;
    std::vector<Instance> m_instances;
    std::vector<std::string> m_adoptedScopes;
    int m_runningLimit = 0;
    int m_endedCount = 0;
    std::string m_limitError; ///< why an instance could not be frozen or thawed, once
};

} // namespace nicer::workload
