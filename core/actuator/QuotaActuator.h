#pragma once

#include "api/Actuator.h"
#include "util/Result.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace nicer::actuator {

/**
 * Applies the controller's quota to the volunteer work. Implementations are chosen at run time (the first
 * that is supported wins, see ActuatorSelection) and the active one is shown to the user by name().
 */
class QuotaActuator {
public:
    virtual ~QuotaActuator() = default;

    /// Which actuator it is, shown by `nicer status` and the GUI.
    virtual api::Actuator kind() const = 0;
    /// Its keyword, e.g. "systemd-slice", for the log and error messages.
    std::string name() const { return std::string(api::busKeyword(kind())); }

    /// Applies @p quota, a share of the whole machine (0..1) on a machine with @p cpuCount CPUs. Quota 0
    /// stops (freezes) the work; a later quota above 0 lets it run again.
    virtual Result<void> apply(double quota, int cpuCount) = 0;

    /// CPU time the work has used so far, in ns; the loop takes differences between periods.
    virtual Result<std::uint64_t> workCpuNSec() = 0;

    /// True while the work is frozen (quota 0 or paused).
    virtual bool frozen() const = 0;

    /// Why this actuator caps the work less well than it could, and what to do (ActuatorNote.h); empty when
    /// all is well.
    virtual std::string note() const { return {}; }

    /// Whether the quota is a cgroup's CPU bandwidth limit (cpu.max), which the kernel's fair scheduler
    /// enforces and a sched_ext scheduler may ignore: the daemon then checks every period that it holds.
    virtual bool capsByCpuBandwidth() const { return false; }

    /// The kernel's CPU bandwidth window over which the quota is enforced, where this actuator uses one (see
    /// BandwidthWindows.h: a quota changed inside a window lets the work exceed it).
    virtual std::optional<std::chrono::microseconds> bandwidthWindow() const { return std::nullopt; }
    /// Makes the window @p window long; only where bandwidthWindow() has a value.
    virtual Result<void> setBandwidthWindow(std::chrono::microseconds /*window*/) {
        return Error{name() + " has no CPU bandwidth window"};
    }
    /// How many windows the kernel has started so far; it counts only while the work runs under a quota.
    virtual Result<std::uint64_t> bandwidthWindowsStarted() {
        return Error{name() + " has no CPU bandwidth window"};
    }

    /// Lets the work run again (thaws it) so that it can be stopped cleanly; the next apply() takes control
    /// again (of the new work, when the workload is switched).
    virtual Result<void> release() = 0;
};

/// CPUQuotaPerSecUSec for a share of the machine: quota x CPUs x 1 s, at least 1% of one CPU, since the
/// kernel takes no CFS quota under 1 ms per 100 ms period and systemd rejects 0.
std::uint64_t quotaPerSecUSec(double quota, int cpuCount);

inline constexpr std::uint64_t kMinQuotaPerSecUSec = 10'000;
/// CPUQuotaPerSecUSec for "no quota" (systemd's infinity).
inline constexpr std::uint64_t kNoCpuQuota = UINT64_MAX;

} // namespace nicer::actuator
