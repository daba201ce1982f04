#pragma once

#include "actuator/DutyCycleActuator.h"
#include "actuator/QuotaActuator.h"
#include "actuator/SliceMemoryLimit.h"
#include "api/DaemonState.h"
#include "api/Placement.h"
#include "daemon/DaemonConfig.h"
#include "daemon/UserManagerBoundary.h"
#include "kernel/CgroupLayout.h"
#include "usermanager/SystemdUnitManager.h"
#include "util/Result.h"
#include "workhost/WorkHostUnits.h"

#include <systemd/sd-event.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace nicer::daemon {

/**
 * Where the work runs and what caps it: the slice, placed in the root idle slice where the system part
 * allows it or else in the user manager (DaemonConfig::placement), its actuator (the slice's CPU quota, or
 * a duty cycle where that cannot be had: DaemonConfig::actuator) and its memory limit. Each choice that is
 * less than asked for keeps a note of why, in plain words, for the state and the log.
 *
 * Destroyed, it thaws the work (release()) if that was not done, and stops the slice.
 */
class WorkSlice {
public:
    /// Connects to the user manager, reads the cgroup layout, places the slice and selects its actuator on
    /// @p event, then gives the slice its memory limit (a limit that cannot be had is a note, not an error).
    static Result<std::unique_ptr<WorkSlice>> create(const DaemonConfig& config, sd_event* event);
    ~WorkSlice();
    WorkSlice(const WorkSlice&) = delete;
    WorkSlice& operator=(const WorkSlice&) = delete;

    /// Where the work's units run: the user manager, or the root idle slice's work host.
    usermanager::UnitManager& units() { return *m_units; }
    const kernel::CgroupLayout& layout() const { return m_layout; }
    actuator::QuotaActuator& actuator() { return *m_actuator; }
    const actuator::QuotaActuator& actuator() const { return *m_actuator; }
    /// The bandwidth window follows nicerd's period unless --quota-period set it: the window for @p period,
    /// where the actuator has one.
    Result<void> followPeriod(std::chrono::milliseconds period);

    api::Placement placement() const {
        return m_rootUnits ? api::Placement::RootSlice : api::Placement::UserSlice;
    }
    /// Why the actuator caps the work less well than it could, and the memory limit's note; empty when all
    /// is well.
    std::string actuatorNote() const;
    /// Its part of the daemon's state: the actuator, the placement and the memory limit, with their notes.
    void describe(api::DaemonState& state) const;

    /// The user manager's boundary around the slice, for the split signal (@p signal: nicerd's --signal), or
    /// null (told on stderr unless the signal is the machine's) when it cannot be read.
    std::unique_ptr<UserManagerBoundary> userManagerBoundary(control::Signal signal) const;
    /// A reader of the work's processes (its slice's cgroup, found now, read at each call); null when the
    /// slice has no cgroup.
    std::function<std::vector<pid_t>()> workPids() const;
    /// A duty cycle on the slice, to replace a slice quota the kernel does not enforce.
    Result<std::unique_ptr<actuator::QuotaActuator>> dutyCycleFallback();
    /// Puts @p fallback in the place of the slice's actuator, with the note why; returns the old one, to be
    /// released once nothing uses it.
    std::unique_ptr<actuator::QuotaActuator>
    replaceActuator(std::unique_ptr<actuator::QuotaActuator> fallback, std::string note);

    /// The profile's MemoryHigh for @p share of the machine's memory (actuator::memoryHighFor), under the
    /// fence applyMemoryLimit() set; the machine's memory where neither limits it; 0 when its size is not
    /// known.
    std::uint64_t memoryCeiling(double share) const;
    /// Sets the slice's MemoryHigh: the profile's (memoryCeiling(@p share)), or the memory rule's @p
    /// ruleLimit where that is lower (0: none). Written when it changes, without waiting for systemd's
    /// answer, which the next call takes: one systemd refused (or did not answer in time) is said in the
    /// note and asked again.
    void followMemoryShare(double share, std::uint64_t ruleLimit = 0);
    /// The work's slice on the cgroup tree; empty when it has none.
    std::string cgroup() const;

    /// Lets the work run freely (thawed: a frozen process cannot act on a stop signal).
    void release();

private:
    WorkSlice(const DaemonConfig& config, sd_event* event, kernel::CgroupLayout layout)
        : m_config(config)
        , m_event(event)
        , m_layout(std::move(layout)) {}
    /// Puts the work in the root idle slice where the system part allows it, else leaves it in the user
    /// manager's slice; either way m_placementNote says why.
    Result<void> choosePlacement();
    Result<void> selectActuator();
    /// Gives the slice its memory limit (either actuator's); one that cannot be had is said in m_memoryNote.
    void applyMemoryLimit();
    /// A duty cycle on the slice's @p cgroup, by @p method or else the freezer where the cgroup has one.
    Result<std::unique_ptr<actuator::QuotaActuator>>
    createDutyCycle(const std::string& cgroup, std::optional<actuator::DutyCycleMethod> method);

    const DaemonConfig& m_config;
    sd_event* m_event;
    kernel::CgroupLayout m_layout;
    std::unique_ptr<usermanager::SystemdUnitManager> m_userUnits; ///< the user manager
    std::unique_ptr<workhost::WorkHostUnits> m_rootUnits; ///< the root idle slice, when the work runs there
    usermanager::UnitManager* m_units = nullptr;          ///< where the work runs: one of the two
    std::string m_placementNote;
    std::unique_ptr<actuator::QuotaActuator> m_actuator;
    std::string m_actuatorNote;         ///< why nicerd chose a duty cycle, when it did
    std::string m_memoryNote;           ///< why the memory limit asked for is not in force
    std::uint64_t m_memoryMaxBytes = 0; ///< the memory limit in force, 0 when none
    std::uint64_t m_totalMemory = 0;    ///< the machine's, bytes; 0: not known (no limits then)
    actuator::MemoryLimit m_fence;      ///< the limit applyMemoryLimit() asked for (memory-max)
    std::uint64_t m_memoryHigh = actuator::kNoMemoryLimit; ///< the MemoryHigh written last; 0: to write again
    std::string m_memoryHighNote; ///< why the profile's MemoryHigh is not in force; empty when it is
    bool m_memoryEnforced = true; ///< the kernel enforces memory limits on the slice (memory delegated)
    bool m_sliceStarted = false;
};

} // namespace nicer::daemon
