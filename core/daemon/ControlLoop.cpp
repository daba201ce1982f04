#include "daemon/ControlLoop.h"

#include <algorithm>
#include <unistd.h>
#include <utility>

namespace nicer::daemon {

ControlLoop::ControlLoop(cpu::CpuSampler sampler, const control::ControllerParams& params,
                         actuator::QuotaActuator& actuator, std::size_t historyCapacity)
    : m_sampler(std::move(sampler))
    , m_controller(params)
    , m_actuator(&actuator)
    , m_historyCapacity(historyCapacity)
    , m_ticksPerSecond(std::max(1L, ::sysconf(_SC_CLK_TCK))) {}

Result<void> ControlLoop::prime() {
    if (auto primed = m_sampler.prime(); !primed) {
        return primed;
    }
    auto work = m_actuator->workCpuNSec();
    if (!work) {
        return work.error();
    }
    m_workNSec = *work;
    return {};
}

Result<api::Sample> ControlLoop::tick(std::uint64_t timeUSec) {
    auto usage = m_sampler.sample();
    if (!usage) {
        (void)m_actuator->apply(0.0, m_cpuCount); // blind: hold the work rather than let it run unwatched
        return usage.error();
    }
    if (usage->totalTicks == 0) {
        return Error{"no CPU time passed during the period; the period is too short for this machine"};
    }
    m_cpuCount = usage->cpuCount;

    // The work's share from its cgroup's CPU time, over the same span of machine time as the idle share.
    const auto work = m_actuator->workCpuNSec();
    double background = 0.0;
    if (work) {
        const double machineNSec =
            static_cast<double>(usage->totalTicks) * 1e9 / static_cast<double>(m_ticksPerSecond);
        const std::uint64_t delta = *work >= m_workNSec ? *work - m_workNSec : 0;
        background = std::clamp(static_cast<double>(delta) / machineNSec, 0.0, usage->busy);
        m_workNSec = *work;
    }

    api::Sample s;
    s.timeUSec = timeUSec;
    s.idle = usage->idle;
    s.background = background;
    s.foreground = std::max(0.0, usage->busy - background);
    s.paused = m_paused;
    if (!m_paused) {
        m_controller.step(usage->idle);
    }
    const auto& state = m_controller.state();
    s.quota = m_paused ? 0.0 : state.quota;
    s.multiplier = state.multiplier;
    s.overloadCount = static_cast<std::uint32_t>(state.overloadCount);

    auto applied = m_actuator->apply(s.quota, m_cpuCount);
    m_history.push_back(s);
    while (m_history.size() > m_historyCapacity) {
        m_history.pop_front();
    }
    m_last = s;
    if (!applied) {
        return Error{"cannot apply the quota: " + applied.error().message};
    }
    if (!work) {
        return Error{"cannot read the work's CPU time: " + work.error().message};
    }
    return s;
}

Result<void> ControlLoop::pause() {
    m_paused = true;
    return m_actuator->apply(0.0, m_cpuCount);
}

void ControlLoop::resume() {
    if (m_paused) {
        m_paused = false;
        m_controller.reset();
    }
}

Result<void> ControlLoop::setActuator(actuator::QuotaActuator& actuator) {
    // Another actuator may count the work's CPU time elsewhere (systemd's CPUUsageNSec, the kernel's
    // cpu.stat): the next period's difference starts from its own count.
    auto work = actuator.workCpuNSec();
    if (!work) {
        return Error{"cannot read the work's CPU time: " + work.error().message};
    }
    m_actuator = &actuator;
    m_workNSec = *work;
    const double quota = m_paused || !m_last ? 0.0 : m_last->quota;
    return m_actuator->apply(quota, m_cpuCount);
}

Result<void> ControlLoop::restart() {
    m_controller.reset();
    return m_actuator->apply(0.0, m_cpuCount);
}

} // namespace nicer::daemon
