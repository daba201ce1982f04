#include "actuator/SignalDutyCycleActuator.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace nicer::actuator {

namespace {

std::uint64_t usec(std::chrono::microseconds d) {
    return static_cast<std::uint64_t>(d.count());
}

} // namespace

Result<std::unique_ptr<SignalDutyCycleActuator>>
SignalDutyCycleActuator::create(sd_event* event, systemd::CgroupLayout layout, std::string cgroup,
                                std::chrono::milliseconds slot) {
    if (cgroup.empty()) {
        return Error{"the work's slice has no cgroup, so a signal duty cycle cannot find its processes"};
    }
    auto self = std::unique_ptr<SignalDutyCycleActuator>(
        new SignalDutyCycleActuator(std::move(layout), std::move(cgroup), slot));
    sd_event_source* slotTimer = nullptr;
    sd_event_source* stopTimer = nullptr;
    int r = sd_event_add_time_relative(event, &slotTimer, CLOCK_MONOTONIC, 0, 1000, &onSlot, self.get());
    if (r >= 0) {
        self->m_slotTimer.reset(slotTimer);
        r = sd_event_add_time_relative(event, &stopTimer, CLOCK_MONOTONIC, usec(slot), 1000, &onStop,
                                       self.get());
    }
    if (r < 0) {
        return Error{std::string("cannot set up the duty-cycle timers: ") + std::strerror(-r)};
    }
    self->m_stopTimer.reset(stopTimer);
    sd_event_source_set_enabled(stopTimer, SD_EVENT_OFF);
    return self;
}

SignalDutyCycleActuator::SignalDutyCycleActuator(systemd::CgroupLayout layout, std::string cgroup,
                                                 std::chrono::milliseconds slot)
    : m_layout(std::move(layout))
    , m_cgroup(std::move(cgroup))
    , m_slot(slot) {}

SignalDutyCycleActuator::~SignalDutyCycleActuator() {
    (void)release();
}

Result<void> SignalDutyCycleActuator::apply(double quota, int cpuCount) {
    m_quota = std::clamp(quota, 0.0, 1.0);
    m_cpuCount = std::max(cpuCount, 1);
    if (m_released && m_slotTimer) {
        // Released to stop the work for a switch: the new work is under the cycle again from the next slot.
        m_released = false;
        sd_event_source_set_time_relative(m_slotTimer.get(), 0);
        sd_event_source_set_enabled(m_slotTimer.get(), SD_EVENT_ONESHOT);
    }
    return {};
}

int SignalDutyCycleActuator::signalAll(int signal) {
    const auto pids = m_layout.readPids(m_cgroup);
    if (!pids) {
        return 0;
    }
    for (const pid_t pid : *pids) {
        ::kill(pid, signal);
    }
    return static_cast<int>(pids->size());
}

int SignalDutyCycleActuator::onSlot(sd_event_source* source, std::uint64_t, void* userdata) noexcept {
    auto* self = static_cast<SignalDutyCycleActuator*>(userdata);
    // Each process runs on at most one CPU, so the work at full speed uses min(processes, CPUs) CPUs; the
    // duty is the share of that which the quota allows.
    const int processes = self->signalAll(SIGCONT);
    const double fullSpeedCpus = std::max(1, std::min(processes, self->m_cpuCount));
    self->m_duty = std::clamp(self->m_quota * self->m_cpuCount / fullSpeedCpus, 0.0, 1.0);
    if (self->m_duty <= 0.0) {
        self->signalAll(SIGSTOP);
    } else if (self->m_duty < 1.0) {
        const auto runFor =
            std::chrono::duration_cast<std::chrono::microseconds>(self->m_slot * self->m_duty);
        sd_event_source_set_time_relative(self->m_stopTimer.get(), usec(runFor));
        sd_event_source_set_enabled(self->m_stopTimer.get(), SD_EVENT_ONESHOT);
    }
    sd_event_source_set_time_relative(source, usec(self->m_slot));
    sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
    return 0;
}

int SignalDutyCycleActuator::onStop(sd_event_source*, std::uint64_t, void* userdata) noexcept {
    static_cast<SignalDutyCycleActuator*>(userdata)->signalAll(SIGSTOP);
    return 0;
}

Result<std::uint64_t> SignalDutyCycleActuator::workCpuNSec() {
    return m_layout.readCpuUsageNSec(m_cgroup);
}

Result<void> SignalDutyCycleActuator::release() {
    if (m_slotTimer) {
        sd_event_source_set_enabled(m_slotTimer.get(), SD_EVENT_OFF);
        sd_event_source_set_enabled(m_stopTimer.get(), SD_EVENT_OFF);
    }
    m_released = true;
    m_duty = 1.0;
    signalAll(SIGCONT);
    return {};
}

} // namespace nicer::actuator
