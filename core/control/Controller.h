#pragma once

#include "control/ControllerParams.h"

namespace nicer::control {

/// What the controller holds between periods.
struct ControllerState {
    double multiplier = 1.0; ///< m: how many reserve bands of idle are kept
    int overloadCount = 0;   ///< c: consecutive periods with no idle
    double quota = 0.0;      ///< q: the work's share of the whole machine, 0 = stopped
};

/// The idle share of the whole machine kept free for the user's programs: multiplier x reserve band, at most
/// the whole machine. What `nicer status` and the tray show as the reserve.
double reserveKept(double reserveBand, double multiplier);

/**
 * The thesis's starvation-detection controller (Figure 4) with the exact semantics of DESIGN.md.
 *
 * Pure and deterministic: the output depends only on the parameters and the sequence of idle fractions fed
 * to step(), so any recorded idle trace can be replayed offline.
 */
class Controller {
public:
    /// @p params must have passed validate(); the state starts at m = m_min, c = 0, q = 0.
    explicit Controller(const ControllerParams& params);

    /// Feeds one period's idle fraction of the whole machine (0..1) and returns the new state.
    const ControllerState& step(double idle);

    /// Changes the parameters while running, keeping the integral (quota) and clamping m into the new range.
    void setParams(const ControllerParams& params);

    /// Back to the initial state (m = m_min, c = 0, q = 0).
    void reset();

    const ControllerState& state() const { return m_state; }
    const ControllerParams& params() const { return m_params; }

private:
    ControllerParams m_params;
    ControllerState m_state;
};

} // namespace nicer::control
