#include "control/Controller.h"

#include <algorithm>

namespace nicer::control {

double reserveKept(double reserveBand, double multiplier) {
    return std::min(1.0, multiplier * reserveBand);
}

Controller::Controller(const ControllerParams& params)
    : m_params(params) {
    reset();
}

void Controller::reset() {
    m_state = ControllerState{m_params.minMultiplier, 0, 0.0};
}

void Controller::setParams(const ControllerParams& params) {
    m_params = params;
    m_state.multiplier = std::clamp(m_state.multiplier, params.minMultiplier, params.maxMultiplier);
}

const ControllerState& Controller::step(double idle) {
    auto& s = m_state;
    const auto& p = m_params;

    // 1. No idle means the foreground may be starving: widen the band multiplicatively; else let it decay
    //    back to the minimum, by the decay factor and at least one step (decay 1: the thesis's one step).
    if (idle <= p.idleEpsilon) {
        s.overloadCount += 1;
        s.multiplier = std::min(2.0 * s.multiplier, p.maxMultiplier);
    } else {
        s.overloadCount = 0;
        s.multiplier =
            std::max(std::min(s.multiplier - 1.0, p.multiplierDecay * s.multiplier), p.minMultiplier);
    }

    // 2. Repeated overload stops the work; otherwise integrate the idle left above the band.
    if (s.overloadCount > p.overloadThreshold) {
        s.overloadCount = 0;
        s.quota = 0.0;
        s.multiplier = p.maxMultiplier;
    } else {
        s.quota = s.quota + (idle - s.multiplier * p.reserveBand);
    }

    // 3. The quota is a share of the machine.
    s.quota = std::clamp(s.quota, 0.0, 1.0);
    return s;
}

} // namespace nicer::control
