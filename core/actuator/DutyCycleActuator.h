#pragma once

#include "actuator/QuotaActuator.h"
#include "kernel/CgroupLayout.h"
#include "libsystemd/Timer.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <memory>
#include <string>

namespace nicer::actuator {

/// How a duty cycle holds the work for the rest of each slot.
enum class DutyCycleMethod {
    /// cgroup.freeze of the work's cgroup (cgroup v2, Linux 5.2): the whole subtree at once, children forked
    /// during the slot included, and invisible to the work (no SIGSTOP/SIGCONT it or BOINC could observe).
    Freezer,
    /// SIGSTOP/SIGCONT to each process of the cgroup, read each slot: for hybrid and v1 trees.
    Signal,
};

/// The freezer where the work's cgroup has cgroup.freeze, else signals.
DutyCycleMethod dutyCycleMethodFor(const kernel::CgroupLayout& layout, std::string_view cgroup);

/// The share of each slot the work may run: the quota over what the work can use at full speed. Each
/// process runs on at most one CPU, so that is min(processes, CPUs) CPUs (at least one).
double dutyForQuota(double quota, int cpuCount, int processes);

/**
 * For user managers without the cpu controller (Ubuntu 22.04, Mint 21 and RHEL 9 delegate only pids and
 * memory, and systemd then accepts CPUQuota= that the kernel does not enforce): lets the work run for a
 * fraction of every slot and holds it for the rest, as BOINC and cpulimit do. It holds it by the method
 * given: the work's cgroup.freeze ("freezer-duty-cycle"), or SIGSTOP to its processes
 * ("signal-duty-cycle").
 *
 * Fail-safe: release() and the destructor let the work run. A stopped unit is not thawed by systemd when
 * nicer wrote cgroup.freeze, so whoever stops the work releases the cycle first (nicerd does, at shutdown and
 * before a workload switch); after a crash the work's stop still ends within its stop timeout (cgroup v2
 * lets SIGKILL through a freeze), and create() thaws a cgroup that a crashed run left frozen.
 */
class DutyCycleActuator final : public QuotaActuator {
public:
    static Result<std::unique_ptr<DutyCycleActuator>> create(sd_event* event, kernel::CgroupLayout layout,
                                                             std::string cgroup, DutyCycleMethod method,
                                                             std::chrono::milliseconds slot);
    ~DutyCycleActuator() override;

    api::Actuator kind() const override {
        return m_method == DutyCycleMethod::Freezer ? api::Actuator::FreezerDutyCycle
                                                    : api::Actuator::SignalDutyCycle;
    }
    Result<void> apply(double quota, int cpuCount) override;
    Result<std::uint64_t> workCpuNSec() override;
    bool frozen() const override { return m_duty <= 0.0; }
    Result<void> release() override;

private:
    DutyCycleActuator(kernel::CgroupLayout layout, std::string cgroup, DutyCycleMethod method,
                      std::chrono::milliseconds slot);
    void onSlot();
    /// Holds the work (freezes or stops it) or lets it run.
    Result<void> hold(bool held);

    kernel::CgroupLayout m_layout;
    std::string m_cgroup;
    DutyCycleMethod m_method;
    std::chrono::milliseconds m_slot;
    double m_quota = 0.0;
    int m_cpuCount = 1;
    double m_duty = 0.0;
    bool m_released = false;
    libsystemd::Timer m_slotTimer;
    libsystemd::Timer m_holdTimer;
};

} // namespace nicer::actuator
