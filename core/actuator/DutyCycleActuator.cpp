#include "actuator/DutyCycleActuator.h"

#include <algorithm>
#include <csignal>

namespace nicer::actuator {

DutyCycleMethod dutyCycleMethodFor(const kernel::CgroupLayout& layout, std::string_view cgroup) {
    return layout.freezeFile(cgroup) ? DutyCycleMethod::Freezer : DutyCycleMethod::Signal;
}

double dutyForQuota(double quota, int cpuCount, int processes) {
    const int cpus = std::max(cpuCount, 1);
    const double fullSpeedCpus = std::max(1, std::min(processes, cpus));
    return std::clamp(std::clamp(quota, 0.0, 1.0) * cpus / fullSpeedCpus, 0.0, 1.0);
}

Result<std::unique_ptr<DutyCycleActuator>>
DutyCycleActuator::create(sd_event* event, kernel::CgroupLayout layout, std::string cgroup,
                          DutyCycleMethod method, std::chrono::milliseconds slot) {
    if (cgroup.empty()) {
        return Error{"the work's slice has no cgroup, so a duty cycle cannot find its processes"};
    }
    // A freezer duty cycle that crashed in the held part of a slot left the cgroup frozen: thawed whichever
    // method runs now. For the freezer, this is also the test that it can write cgroup.freeze at all.
    if (auto thawed = layout.setFrozen(cgroup, false); !thawed && method == DutyCycleMethod::Freezer) {
        return Error{"a freezer duty cycle cannot use the work's cgroup: " + thawed.error().message};
    }
    auto self = std::unique_ptr<DutyCycleActuator>(
        new DutyCycleActuator(std::move(layout), std::move(cgroup), method, slot));
    auto* raw = self.get();
    auto slotTimer = libsystemd::Timer::create(event, [raw] { raw->onSlot(); });
    if (!slotTimer) {
        return Error{"cannot set up the duty-cycle timers: " + slotTimer.error().message};
    }
    auto holdTimer = libsystemd::Timer::create(event, [raw] { (void)raw->hold(true); });
    if (!holdTimer) {
        return Error{"cannot set up the duty-cycle timers: " + holdTimer.error().message};
    }
    self->m_slotTimer = std::move(*slotTimer);
    self->m_holdTimer = std::move(*holdTimer);
    self->m_slotTimer.armIn(std::chrono::microseconds(0));
    return self;
}

DutyCycleActuator::DutyCycleActuator(kernel::CgroupLayout layout, std::string cgroup, DutyCycleMethod method,
                                     std::chrono::milliseconds slot)
    : m_layout(std::move(layout))
    , m_cgroup(std::move(cgroup))
    , m_method(method)
    , m_slot(slot) {}

DutyCycleActuator::~DutyCycleActuator() {
    try {
        (void)release();
    } catch (...) {
        // Only an error text can throw (out of memory); the work was let run before it was built.
    }
}

Result<void> DutyCycleActuator::apply(double quota, int cpuCount) {
    m_quota = std::clamp(quota, 0.0, 1.0);
    m_cpuCount = std::max(cpuCount, 1);
    if (m_released && m_slotTimer) {
        // Released to stop the work for a switch: the new work is under the cycle again from the next slot.
        m_released = false;
        m_slotTimer.armIn(std::chrono::microseconds(0));
    }
    return {};
}

Result<void> DutyCycleActuator::hold(bool held) {
    if (m_method == DutyCycleMethod::Freezer) {
        return m_layout.setFrozen(m_cgroup, held);
    }
    auto signalled = m_layout.signalAll(m_cgroup, held ? SIGSTOP : SIGCONT);
    return signalled ? Result<void>{} : Result<void>(signalled.error());
}

void DutyCycleActuator::onSlot() {
    // The next slot is armed first, so that a failure below cannot end the cycle.
    m_slotTimer.armIn(m_slot);
    // Counted before the work is let run: with no quota the work stays held, instead of running for a
    // moment each slot. The freezer needs no process list, so a cgroup that cannot be listed still cycles.
    const auto pids = m_layout.readPids(m_cgroup);
    const int processes = pids ? static_cast<int>(pids->size()) : 0;
    m_duty = dutyForQuota(m_quota, m_cpuCount, processes);
    if (!pids && m_method == DutyCycleMethod::Signal) {
        return;
    }
    (void)hold(m_duty <= 0.0);
    if (m_duty > 0.0 && m_duty < 1.0) {
        m_holdTimer.armIn(m_slot * m_duty);
    }
}

Result<std::uint64_t> DutyCycleActuator::workCpuNSec() {
    return m_layout.readCpuUsageNSec(m_cgroup);
}

Result<void> DutyCycleActuator::release() {
    m_slotTimer.disarm();
    m_holdTimer.disarm();
    m_released = true;
    m_duty = 1.0;
    return hold(false);
}

} // namespace nicer::actuator
