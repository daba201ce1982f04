#include "control/Controller.h"

#include <algorithm>

namespace nicer::control {

double reserveKept(double reserveBand, double multiplier, bool outsideSignal, double quota) {
    if (outsideSignal && quota >= 1.0) {
        return 0.0;
    }
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

void Controller::adjustMultiplier(bool overload) {
    auto& s = m_state;
    const auto& p = m_params;
    // No idle means the foreground may be starving: widen the band multiplicatively; else let it decay back
    // to the minimum, by the decay factor and at least one step (decay 1: the thesis's one step).
    if (overload) {
        s.overloadCount += 1;
        s.multiplier = std::min(2.0 * s.multiplier, p.maxMultiplier);
    } else {
        s.overloadCount = 0;
        s.multiplier =
            std::max(std::min(s.multiplier - 1.0, p.multiplierDecay * s.multiplier), p.minMultiplier);
    }
}

bool Controller::stopAfterOverload() {
    auto& s = m_state;
    if (s.overloadCount <= m_params.overloadThreshold) {
        return false;
    }
    s.overloadCount = 0;
    s.quota = 0.0;
    s.multiplier = m_params.maxMultiplier;
    return true;
}

const ControllerState& Controller::step(double idle) {
    auto& s = m_state;
    // 1. The band follows starvation.
    adjustMultiplier(idle <= m_params.idleEpsilon);
    // 2. Repeated overload stops the work; otherwise integrate the idle left above the band.
    if (!stopAfterOverload()) {
        s.quota = s.quota + (idle - s.multiplier * m_params.reserveBand);
    }
    // 3. The quota is a share of the machine.
    s.quota = std::clamp(s.quota, 0.0, 1.0);
    return s;
}

const ControllerState& Controller::stepOutside(double idle, double work, double outside) {
    auto& s = m_state;
    const auto& p = m_params;
    work = std::clamp(work, 0.0, 1.0);
    outside = std::clamp(outside, 0.0, 1.0);
    // Within one band the outside is not starving, whatever the idle time: the kernel gives it its share of
    // the machine at once. Past one band, a period without idle is an overload only while the work held more
    // than a band of the machine: when your programs beside it fill the rest, cutting the work gives the
    // outside nothing (the kernel keeps the work behind them anyway).
    const bool outsideQuiet = outside <= p.reserveBand;
    const bool overload = !outsideQuiet && idle <= p.idleEpsilon && work > p.reserveBand;
    adjustMultiplier(overload);
    if (!stopAfterOverload()) {
        if (outsideQuiet && s.multiplier <= p.minMultiplier) {
            s.quota = 1.0; // nothing outside worth a band: no cap, so no throttling
        } else {
            // The room the outside leaves: the idle time after an overload, else everything but the work's
            // and the outside's use (the kernel gives what your programs use back to them at once). From what
            // the work used when that was less: a quota above its use protects nothing.
            const double room = overload ? idle : std::max(0.0, 1.0 - work - outside);
            // After an overload the outside gets at least as much again as it had, as the band doubles: a hog
            // outside takes the machine from the first period on, not after the band has widened three times
            // (the kernel gives it nothing of the work's share meanwhile, whatever the work's weight).
            const double kept = s.multiplier * p.reserveBand;
            s.quota = std::min(s.quota, work) + (room - (overload ? std::max(kept, outside) : kept));
        }
    }
    s.quota = std::clamp(s.quota, 0.0, 1.0);
    return s;
}

} // namespace nicer::control
