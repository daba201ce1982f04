#include "control/TargetLoop.h"

#include <algorithm>

namespace nicer::control {

double TargetLoop::step(double reading, double target, double seconds, double resumeDelay) {
    const double error = target - reading;
    if (!m_started) {
        m_lastError = error;
        m_started = true;
    }
    if (reading > target + m_tuning.tripMargin) {
        m_cap = 0.0;
        m_wait = resumeDelay;
    } else if (m_wait > 0.0) {
        m_wait = std::max(0.0, m_wait - seconds);
    } else {
        m_cap += m_tuning.proportional * (error - m_lastError) + m_tuning.integral * seconds * error;
        m_cap = std::clamp(m_cap, 0.0, 1.0);
    }
    m_lastError = error;
    return m_cap;
}

void TargetLoop::reset() {
    *this = TargetLoop(m_tuning);
}

} // namespace nicer::control
