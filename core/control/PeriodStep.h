#pragma once

#include "control/Controller.h"
#include "control/ControllerParams.h"
#include "control/WorkRules.h"

#include <optional>
#include <string>

namespace nicer::control {

/// What one period measured and what the machine said in it: everything the period's decision depends on.
struct PeriodInput {
    double idle = 0.0; ///< idle fraction of the whole machine (the thesis's signal)
    /// The work's share and the share used outside the user manager (the split signal); both or neither.
    std::optional<double> work;
    std::optional<double> outside;
    /// The controller answers only the outside part this period (Signal::Outside); without work and outside
    /// it answers the whole machine.
    bool outsideSignal = false;
    /// The work runs in the root idle slice, where the kernel makes it yield at once to everything: the
    /// outside demand counts as none.
    bool yieldsToEverything = false;
    Surroundings surroundings; ///< what the volunteer's rules read
    double seconds = 1.0;      ///< the period's length, the rules' clock
};

/// What one period decided.
struct PeriodDecision {
    double quota = 0.0;         ///< the work's cap to apply, 0..1: 0 while paused
    ControllerState controller; ///< the controller's state after the period (held while paused)
    Hold hold;                  ///< the tightest rule's hold in the period
    /// holdText() of the hold against the controller's quota, and the rule it names: empty and Rule::None
    /// when no rule held the work under the controller's quota, and while paused.
    std::string holdText;
    Rule heldBy = Rule::None;
    /// The memory rule's hold: the work's memory limit, what to reclaim, the instances kept stopped (its CPU
    /// cap is weighed in hold like any rule's).
    MemoryHold memory;
};

/**
 * One period of nicer's decision, as nicerd's loop (daemon/ControlLoop.h) and `nicer simulate` both run it:
 * the controller on the period's signal, the volunteer's rules beside it (the quota is the controller's or
 * the tightest rule's cap, whichever is lower), and the pause (quota 0, the controller held; it starts
 * afresh when the work resumes). Pure: fed one period's measurements at a time, so a trace that carries
 * them replays nicerd's quotas exactly.
 */
class PeriodStep {
public:
    /// @p params must have passed validate().
    explicit PeriodStep(const ControllerParams& params);

    /// Decides one period. The rules see every period, paused or not, so that their waits run on.
    PeriodDecision step(const PeriodInput& input);

    /// Holds the work at quota 0 and the controller where it is, from the next period on.
    void pause() { m_paused = true; }
    /// Lets the controller take over again from its initial state; nothing when not paused.
    void resume();
    bool paused() const { return m_paused; }
    /// Starts the controller over (new work); a pause stays in force, the rules keep their waits.
    void restart() { m_controller.reset(); }

    /// The memory rule at once, between periods (a PSI trigger fired): its hold (WorkRules::memoryNow).
    const MemoryHold& memoryNow(const MemoryReading& now) { return m_rules.memoryNow(now, params()); }
    /// The memory rule's hold of the last step, or of memoryNow() since.
    const MemoryHold& memoryHold() const { return m_rules.memory(); }

    /// Keeps the controller's integral (Controller::setParams).
    void setParams(const ControllerParams& params) { m_controller.setParams(params); }
    const ControllerParams& params() const { return m_controller.params(); }
    const ControllerState& state() const { return m_controller.state(); }

private:
    Controller m_controller;
    WorkRules m_rules;
    bool m_paused = false;
};

} // namespace nicer::control
