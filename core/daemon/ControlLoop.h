#pragma once

#include "actuator/QuotaActuator.h"
#include "api/DaemonState.h"
#include "api/Sample.h"
#include "control/Controller.h"
#include "control/PeriodStep.h"
#include "control/WorkRules.h"
#include "cpu/CpuSampler.h"
#include "daemon/UserManagerBoundary.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace nicer::daemon {

/**
 * One period of nicer's closed loop: sample the machine's idle time, decide the period (control::PeriodStep,
 * the step `nicer simulate` replays traces with), apply the quota, and split the busy time into the user's
 * (foreground) and the work's (background), and the user's at the user manager's boundary (your programs,
 * other users and services).
 *
 * The controller answers the signal chosen by control::Signal: the whole machine's idle time, or only the
 * demand from outside the user manager. Auto decides every period, so a cpu.idle written or lost while
 * nicerd runs takes effect at the next one. Without a boundary, or when the user manager's CPU time cannot
 * be read, it answers the whole machine.
 *
 * Beside the controller, the volunteer's rules (control/WorkRules.h: temperature, fans, battery, games,
 * named programs) each set a cap from what the machine says; the work's quota is the controller's or the
 * tightest rule's, whichever is lower, and the sample names the rule that held it.
 */
class ControlLoop {
public:
    ControlLoop(cpu::CpuSampler sampler, const control::ControllerParams& params,
                actuator::QuotaActuator& actuator, std::size_t historyCapacity,
                control::Signal signal = control::Signal::Machine, UserManagerBoundary* boundary = nullptr);

    /// Takes the reference read of /proc/stat and of the work's CPU time.
    Result<void> prime();
    /// Runs one period; @p timeUSec stamps the sample, @p surroundings is what the rules see. When /proc/stat
    /// cannot be read the loop is blind and freezes the work (fail safe); other errors are reported while the
    /// quota stays applied.
    Result<api::Sample> tick(std::uint64_t timeUSec, const control::Surroundings& surroundings = {});

    /// Freezes the work until resume(); the loop keeps sampling so the user still sees the machine.
    Result<void> pause();
    /// Lets the controller take over again from its initial state.
    void resume();
    bool paused() const { return m_step.paused(); }
    /// Its part of the daemon's state: the parameters, the pause, the controller's state, the last period and
    /// the rule that held the work in it.
    void describe(api::DaemonState& state) const;
    /// Starts over for new work: the controller from its initial state, and the work frozen until the next
    /// period has measured the machine with it. A pause stays in force.
    Result<void> restart();

    /// Hands the work to @p actuator from the next period on (the old one must outlive this call): it reads
    /// the work's CPU time from here on, and holds the work as the old one did (frozen while paused).
    Result<void> setActuator(actuator::QuotaActuator& actuator);

    /// Parameters are validated by the caller; the controller keeps its integral.
    void setParams(const control::ControllerParams& params) { m_step.setParams(params); }
    const control::ControllerParams& params() const { return m_step.params(); }
    const control::ControllerState& state() const { return m_step.state(); }

    const std::deque<api::Sample>& history() const { return m_history; }
    const std::optional<api::Sample>& last() const { return m_last; }
    /// The memory rule's hold of the last period, or of memoryNow() since.
    const control::MemoryHold& memoryHold() const { return m_step.memoryHold(); }
    /// The memory rule at once, between periods (control::PeriodStep::memoryNow); its CPU cap waits for
    /// the next period.
    const control::MemoryHold& memoryNow(const control::MemoryReading& now) { return m_step.memoryNow(now); }
    int cpuCount() const { return m_cpuCount; }

private:
    /// Whether the controller answers only the outside part this period (the setting, and for auto the
    /// work's cpu.idle now).
    bool answerOutside();

    cpu::CpuSampler m_sampler;
    control::PeriodStep m_step;
    std::string m_holdText; ///< control::holdText of the last period's hold; empty when none held the work
    actuator::QuotaActuator* m_actuator;
    std::size_t m_historyCapacity;
    std::deque<api::Sample> m_history;
    std::optional<api::Sample> m_last;
    control::Signal m_signal;
    UserManagerBoundary* m_boundary;
    std::uint64_t m_workNSec = 0;
    std::optional<std::uint64_t> m_managerNSec;
    long m_ticksPerSecond;
    int m_cpuCount = 1;
};

} // namespace nicer::daemon
