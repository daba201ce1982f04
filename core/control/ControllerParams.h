#pragma once

#include "util/Result.h"

#include <chrono>

namespace nicer::control {

/// Parameters of the starvation-detection controller of K. Seemakhupt, "Nicer CPU Scheduling and Bandwidth
/// Management for Volunteer Computing", master's thesis, Chulalongkorn University, 2015 (Figure 4); the
/// controller's exact semantics and defaults: docs/controller.md.
struct ControllerParams {
    /// Idle share of the whole machine kept in reserve, before the multiplier (b).
    double reserveBand = 0.05;
    /// Lower and upper bound of the reserve-band multiplier (m_min, m_max).
    double minMultiplier = 1.0;
    double maxMultiplier = 16.0;
    /// How fast the band shrinks back once there is idle again (d): each such period the multiplier falls
    /// to d·m, and by at least 1. 1 is the thesis's one step per period, which after an overload keeps a
    /// band of up to 80% for 15 periods; the default gives the CPU back within two.
    double multiplierDecay = 0.25;
    /// Consecutive no-idle periods tolerated before the work is stopped (T): it stops on the (T+1)th.
    int overloadThreshold = 4;
    /// A measured idle share at or below this counts as "no idle" (e).
    double idleEpsilon = 0.0;
    /// How often the loop samples and acts.
    std::chrono::milliseconds period{1000};

    bool operator==(const ControllerParams&) const = default;
};

/// Checks every parameter against its range in parameterTable() (control/ParameterTable.h) and that
/// min-multiplier <= max-multiplier; the error names the first parameter out of range and its allowed range.
Result<void> validate(const ControllerParams& params);

} // namespace nicer::control
