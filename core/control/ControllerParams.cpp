#include "control/ControllerParams.h"

#include <cstdio>
#include <string>

namespace nicer::control {

namespace {

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

Error outOfRange(const char* name, const std::string& value, const char* range) {
    return Error{std::string(name) + " = " + value + " is out of range: it must be " + range};
}

} // namespace

Result<void> validate(const ControllerParams& p) {
    // Written as negated "inside" tests so that NaN is rejected as well.
    if (!(p.reserveBand > 0.0 && p.reserveBand <= limits::kReserveBandMax)) {
        return outOfRange("reserve-band", fmt(p.reserveBand),
                          "in (0, 0.5] (a fraction of the whole machine)");
    }
    if (!(p.minMultiplier >= limits::kMultiplierMin && p.minMultiplier <= limits::kMultiplierMax)) {
        return outOfRange("min-multiplier", fmt(p.minMultiplier), "in [1, 64] and at most max-multiplier");
    }
    if (!(p.maxMultiplier >= limits::kMultiplierMin && p.maxMultiplier <= limits::kMultiplierMax)) {
        return outOfRange("max-multiplier", fmt(p.maxMultiplier), "in [1, 64] and at least min-multiplier");
    }
    if (p.minMultiplier > p.maxMultiplier) {
        return Error{"min-multiplier = " + fmt(p.minMultiplier) + " is greater than max-multiplier = " +
                     fmt(p.maxMultiplier) + ": it must be 1 <= min-multiplier <= max-multiplier <= 64"};
    }
    if (p.overloadThreshold < 0) {
        return outOfRange("overload-threshold", std::to_string(p.overloadThreshold), ">= 0 (whole periods)");
    }
    if (!(p.idleEpsilon >= 0.0 && p.idleEpsilon < limits::kIdleEpsilonMax)) {
        return outOfRange("idle-epsilon", fmt(p.idleEpsilon),
                          "in [0, 0.5) (a fraction of the whole machine)");
    }
    if (p.period < limits::kPeriodMin || p.period > limits::kPeriodMax) {
        return outOfRange("period", std::to_string(p.period.count()) + " ms", "between 10 ms and 10 s");
    }
    return {};
}

} // namespace nicer::control
