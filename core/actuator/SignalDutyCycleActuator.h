#pragma once

#include "actuator/QuotaActuator.h"
#include "sd/Timer.h"
#include "systemd/CgroupLayout.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <memory>
#include <string>

namespace nicer::actuator {

/**
 * For user managers without the cpu controller (RHEL 9 reverted its delegation): lets the work's processes
 * run for a fraction of every slot and stops them with SIGSTOP for the rest, as BOINC and cpulimit do. The
 * processes are those of the work's cgroup, read each slot so that restarts are caught.
 */
class SignalDutyCycleActuator final : public QuotaActuator {
public:
    static Result<std::unique_ptr<SignalDutyCycleActuator>>
    create(sd_event* event, systemd::CgroupLayout layout, std::string cgroup, std::chrono::milliseconds slot);
    ~SignalDutyCycleActuator() override;

    std::string name() const override { return "signal-duty-cycle"; }
    Result<void> apply(double quota, int cpuCount) override;
    Result<std::uint64_t> workCpuNSec() override;
    bool frozen() const override { return m_duty <= 0.0; }
    Result<void> release() override;

private:
    SignalDutyCycleActuator(systemd::CgroupLayout layout, std::string cgroup, std::chrono::milliseconds slot);
    void onSlot();

    systemd::CgroupLayout m_layout;
    std::string m_cgroup;
    std::chrono::milliseconds m_slot;
    double m_quota = 0.0;
    int m_cpuCount = 1;
    double m_duty = 0.0;
    bool m_released = false;
    sd::Timer m_slotTimer;
    sd::Timer m_stopTimer;
};

} // namespace nicer::actuator
