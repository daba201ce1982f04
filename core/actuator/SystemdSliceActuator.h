#pragma once

#include "actuator/QuotaActuator.h"
#include "kernel/CgroupLayout.h"
#include "usermanager/UnitManager.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace nicer::actuator {

/// systemd's own CPUQuotaPeriodUSec, when none is set.
inline constexpr std::chrono::microseconds kSystemdQuotaPeriod{100'000};

/// How the slice holds the work back besides its quota.
struct SliceOptions {
    /// CPUWeight "idle"; false keeps the default weight (100), and only the quota holds the work back, as in
    /// the thesis.
    bool idleWeight = true;
    /// The kernel's CPU bandwidth period (CPUQuotaPeriodUSec): the quota is enforced over windows this long,
    /// and the work is throttled once per window. Longer windows throttle less often, and each throttling
    /// delays the user's programs' wake-ups (bench/cpu: a 1 ms sleeper's p99 ~8x its figure alone at 100 ms,
    /// ~1.3x at 1 s). Unset: systemd's own, 100 ms. Quota changes belong at the start of a window
    /// (BandwidthWindows.h); nicerd makes its period a whole number of windows and ticks at their start.
    std::optional<std::chrono::microseconds> quotaPeriod;
};

/**
 * Caps a systemd user slice: CPUQuotaPerSecUSec each period (no D-Bus call when the value is unchanged),
 * CPUWeight "idle" (or the minimum weight) so that the work also loses every contention with the user's
 * programs (unless told to keep the default weight). Quota 0 freezes the slice: FreezeUnit where systemd
 * supports it (pure cgroup v2), else SIGSTOP/SIGCONT through KillUnit (hybrid and v1), else the kernel's
 * cgroup.freeze on the v2 tree. Both of the first two are undone by systemd when it stops the work after
 * nicerd died; cgroup.freeze is not.
 *
 * The quota of every period is written without waiting for systemd's answer (UnitManager::
 * setUnitPropertiesAsync), so a slow manager never stalls nicerd's loop; the answer is taken at the next
 * apply(), where a refusal is reported as that period's failure and the quota sent again. Only the quota
 * written before a thaw waits, so that the thawed work never runs above it.
 *
 * Fail-safe: when systemd cannot be reached to change the cap (the session bus restarting, the user manager
 * re-executing), the work is held with SIGSTOP sent straight to the slice's processes, which needs no bus,
 * and continued with SIGCONT once systemd has taken a later quota. An unchanged quota needs no call, so
 * the kernel keeps enforcing it through an outage; only a change that cannot be made holds the work.
 */
class SystemdSliceActuator final : public QuotaActuator {
public:
    /// Creates the slice (or takes over one left by a previous run); fails when the user manager does not
    /// delegate the cpu controller, so the caller can fall back to another actuator.
    static Result<std::unique_ptr<SystemdSliceActuator>> create(usermanager::UnitManager& units,
                                                                kernel::CgroupLayout layout,
                                                                std::string slice,
                                                                const SliceOptions& options = {});

    api::Actuator kind() const override { return api::Actuator::SystemdSlice; }
    bool capsByCpuBandwidth() const override { return true; }
    Result<void> apply(double quota, int cpuCount) override;
    Result<std::uint64_t> workCpuNSec() override;
    std::optional<std::chrono::microseconds> bandwidthWindow() const override { return m_window; }
    Result<void> setBandwidthWindow(std::chrono::microseconds window) override;
    Result<std::uint64_t> bandwidthWindowsStarted() override {
        return m_layout.readBandwidthWindows(m_cgroup);
    }
    bool frozen() const override { return m_frozen || m_heldWithoutSystemd; }
    /// Says so when systemd refused CPUWeight=idle.
    std::string note() const override { return m_note; }
    Result<void> release() override;

    const std::string& cgroup() const { return m_cgroup; }
    /// How the slice is frozen here, in the order they are tried: FreezeUnit, SIGSTOP through KillUnit, or
    /// the slice's cgroup.freeze written directly.
    enum class FreezeMethod { Systemd, Sigstop, CgroupFreeze };
    /// Known after the first freeze.
    std::optional<FreezeMethod> freezeMethod() const { return m_freezeMethod; }
    /// True while the work is held by the fail-safe (systemd could not be reached at the last apply()).
    bool heldWithoutSystemd() const { return m_heldWithoutSystemd; }

private:
    SystemdSliceActuator(usermanager::UnitManager& units, kernel::CgroupLayout layout, std::string slice,
                         std::string cgroup);
    Result<void> applyThroughSystemd(double quota, int cpuCount);
    Result<void> freeze();
    Result<void> thaw();

    usermanager::UnitManager& m_units;
    kernel::CgroupLayout m_layout;
    std::string m_slice;
    std::string m_cgroup;
    std::uint64_t m_appliedUSec = 0;
    std::chrono::microseconds m_window = kSystemdQuotaPeriod;
    bool m_frozen = false;
    std::optional<FreezeMethod> m_freezeMethod;
    bool m_heldWithoutSystemd = false;
    std::string m_note;
};

} // namespace nicer::actuator
