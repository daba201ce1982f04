#include "control/PeriodStep.h"

#include <algorithm>

namespace nicer::control {

PeriodStep::PeriodStep(const ControllerParams& params)
    : m_controller(params) {}

void PeriodStep::resume() {
    if (m_paused) {
        m_paused = false;
        m_controller.reset();
    }
}

PeriodDecision PeriodStep::step(const PeriodInput& input) {
    if (!m_paused) {
        if (input.outsideSignal && input.work && input.outside) {
            // In the root idle slice the kernel makes the work yield at once to everything, the outside
            // included: no demand is left for the quota to answer.
            m_controller.stepOutside(input.idle, *input.work,
                                     input.yieldsToEverything ? 0.0 : *input.outside);
        } else {
            m_controller.step(input.idle);
        }
    }
    PeriodDecision decision;
    decision.controller = m_controller.state();
    decision.hold = m_rules.step(input.surroundings, params(), input.seconds);
    decision.memory = m_rules.memory();
    if (!m_paused) {
        decision.holdText = holdText(decision.hold, decision.controller.quota);
        decision.heldBy = decision.holdText.empty() ? Rule::None : decision.hold.rule;
        decision.quota = std::min(decision.controller.quota, decision.hold.cap);
    }
    return decision;
}

} // namespace nicer::control
