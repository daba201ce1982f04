#include "daemon/ControlLoop.h"

#include "cpu/DemandSplit.h"

#include <algorithm>
#include <unistd.h>
#include <utility>

namespace nicer::daemon {

ControlLoop::ControlLoop(cpu::CpuSampler sampler, const control::ControllerParams& params,
                         actuator::QuotaActuator& actuator, std::size_t historyCapacity,
                         control::Signal signal, UserManagerBoundary* boundary)
    : m_sampler(std::move(sampler))
    , m_step(params)
    , m_actuator(&actuator)
    , m_historyCapacity(historyCapacity)
    , m_signal(signal)
    , m_boundary(boundary)
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
    if (m_boundary) {
        auto manager = m_boundary->managerCpuNSec();
        m_managerNSec = manager ? std::optional<std::uint64_t>(*manager) : std::nullopt;
    }
    return {};
}

bool ControlLoop::answerOutside() {
    switch (m_signal) {
    case control::Signal::Machine:
        return false;
    case control::Signal::Outside:
        return true;
    case control::Signal::Auto: {
        const auto yields = m_boundary->workYieldsToSiblings();
        return yields && *yields;
    }
    }
    return false;
}

Result<api::Sample> ControlLoop::tick(std::uint64_t timeUSec, const control::Surroundings& surroundings) {
    auto usage = m_sampler.sample();
    if (!usage) {
        (void)m_actuator->apply(0.0, m_cpuCount); // blind: hold the work rather than let it run unwatched
        return usage.error();
    }
    if (usage->totalTicks == 0) {
        return Error{"no CPU time passed during the period; the period is too short for this machine"};
    }
    m_cpuCount = usage->cpuCount;

    // The work's and the user manager's shares from their cgroups' CPU time, over the same span of machine
    // time as the idle share.
    const double machineNSec =
        static_cast<double>(usage->totalTicks) * 1e9 / static_cast<double>(m_ticksPerSecond);
    const auto work = m_actuator->workCpuNSec();
    std::uint64_t workDelta = 0;
    if (work) {
        workDelta = *work >= m_workNSec ? *work - m_workNSec : 0;
        m_workNSec = *work;
    }
    std::optional<std::uint64_t> managerDelta;
    if (m_boundary) {
        const auto manager = m_boundary->managerCpuNSec();
        if (manager && m_managerNSec) {
            managerDelta = *manager >= *m_managerNSec ? *manager - *m_managerNSec : 0;
        }
        m_managerNSec = manager ? std::optional<std::uint64_t>(*manager) : std::nullopt;
    }
    const auto demand = cpu::splitDemand(*usage, machineNSec, workDelta, managerDelta);

    api::Sample s;
    s.timeUSec = timeUSec;
    s.idle = demand.idle;
    s.background = demand.work;
    s.foreground = demand.inside + demand.outside;
    s.outside = demand.split ? demand.outside : -1.0;
    s.paused = paused();
    s.outsideSignal = demand.split && answerOutside();
    s.temperature = surroundings.temperature.value_or(api::kNoTemperature);
    s.presence = surroundings.presence;

    control::PeriodInput input;
    input.idle = demand.idle;
    input.work = demand.work;
    input.outside = demand.split ? std::optional<double>(demand.outside) : std::nullopt;
    input.outsideSignal = s.outsideSignal;
    if (s.outsideSignal) {
        const auto everything = m_boundary->workYieldsToEverything();
        input.yieldsToEverything = everything && *everything;
    }
    input.surroundings = surroundings;
    input.seconds = static_cast<double>(params().period.count()) / 1000.0;
    auto decision = m_step.step(input);
    m_holdText = std::move(decision.holdText);
    s.heldBy = control::ruleName(decision.heldBy);
    s.quota = decision.quota;
    s.multiplier = decision.controller.multiplier;
    s.overloadCount = static_cast<std::uint32_t>(decision.controller.overloadCount);

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
    m_step.pause();
    return m_actuator->apply(0.0, m_cpuCount);
}

void ControlLoop::resume() {
    m_step.resume();
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
    const double quota = paused() || !m_last ? 0.0 : m_last->quota;
    return m_actuator->apply(quota, m_cpuCount);
}

Result<void> ControlLoop::restart() {
    m_step.restart();
    return m_actuator->apply(0.0, m_cpuCount);
}

void ControlLoop::describe(api::DaemonState& s) const {
    s.params = params();
    s.paused = paused();
    s.multiplier = state().multiplier;
    s.overloadCount = static_cast<std::uint32_t>(state().overloadCount);
    s.cpuCount = static_cast<std::uint32_t>(cpuCount());
    s.holdReason = m_holdText;
    const auto& memory = memoryHold();
    s.memoryHold = control::memoryStageName(memory.stage);
    s.memoryHoldLimit = memory.limitBytes;
    s.memoryHoldReason = memory.reason;
    if (const auto& sample = last()) {
        s.heldBy = sample->heldBy;
        s.quota = sample->quota;
        s.idle = sample->idle;
        s.foreground = sample->foreground;
        s.background = sample->background;
        s.outside = sample->outside;
        s.signal = sample->outsideSignal ? control::Signal::Outside : control::Signal::Machine;
    }
}

} // namespace nicer::daemon
