#include "actuator/SignalDutyCycleActuator.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace nicer::actuator {

Result<std::unique_ptr<SignalDutyCycleActuator>>
SignalDutyCycleActuator::create(sd_event* event, systemd::CgroupLayout layout, std::string cgroup,
                                std::chrono::milliseconds slot) {
    if (cgroup.empty()) {
        return Error{"the work's slice has no cgroup, so a signal duty cycle cannot find its processes"};
    }
    auto self = std::unique_ptr<SignalDutyCycleActuator>(
        new SignalDutyCycleActuator(std::move(layout), std::move(cgroup), slot));
    auto* raw = self.get();
    auto slotTimer = sd::Timer::create(event, [raw] { raw->onSlot(); });
    if (!slotTimer) {
        return Error{"cannot set up the duty-cycle timers: " + slotTimer.error().message};
    }
    auto stopTimer =
        sd::Timer::create(event, [raw] { (void)raw->m_layout.signalAll(raw->m_cgroup, SIGSTOP); });
    if (!stopTimer) {
        return Error{"cannot set up the duty-cycle timers: " + stopTimer.error().message};
    }
    self->m_slotTimer = std::move(*slotTimer);
    self->m_stopTimer = std::move(*stopTimer);
    self->m_slotTimer.armIn(std::chrono::microseconds(0));
    return self;
}

SignalDutyCycleActuator::SignalDutyCycleActuator(systemd::CgroupLayout layout, std::string cgroup,
                                                 std::chrono::milliseconds slot)
    : m_layout(std::move(layout))
    , m_cgroup(std::move(cgroup))
    , m_slot(slot) {}

SignalDutyCycleActuator::~SignalDutyCycleActuator() {
    try {
        (void)release();
    } catch (...) {
        // Only the error text can throw (out of memory); the processes were continued before it was built.
    }
}

Result<void> SignalDutyCycleActuator::apply(double quota, int cpuCount) {
    m_quota = std::clamp(quota, 0.0, 1.0);
    m_cpuCount = std::max(cpuCount, 1);
    if (m_released && m_slotTimer) {
        // Released to stop the work for a switch: the new work is under the cycle again from the next slot.
        m_released = false;
        m_slotTimer.armIn(std::chrono::microseconds(0));
    }
    return {};
}

void SignalDutyCycleActuator::onSlot() {
    // The next slot is armed first, so that a failure below cannot end the cycle.
    m_slotTimer.armIn(m_slot);
    // Each process runs on at most one CPU, so the work at full speed uses min(processes, CPUs) CPUs; the
    // duty is the share of that which the quota allows. Counted before any signal: with no quota the work
    // stays stopped, instead of running for a moment each slot.
    const auto pids = m_layout.readPids(m_cgroup);
    const int processes = pids ? static_cast<int>(pids->size()) : 0;
    const double fullSpeedCpus = std::max(1, std::min(processes, m_cpuCount));
    m_duty = std::clamp(m_quota * m_cpuCount / fullSpeedCpus, 0.0, 1.0);
    if (!pids) {
        return;
    }
    for (const pid_t pid : *pids) {
        ::kill(pid, m_duty <= 0.0 ? SIGSTOP : SIGCONT);
    }
    if (m_duty > 0.0 && m_duty < 1.0) {
        m_stopTimer.armIn(m_slot * m_duty);
    }
}

Result<std::uint64_t> SignalDutyCycleActuator::workCpuNSec() {
    return m_layout.readCpuUsageNSec(m_cgroup);
}

Result<void> SignalDutyCycleActuator::release() {
    m_slotTimer.disarm();
    m_stopTimer.disarm();
    m_released = true;
    m_duty = 1.0;
    (void)m_layout.signalAll(m_cgroup, SIGCONT);
    return {};
}

} // namespace nicer::actuator
