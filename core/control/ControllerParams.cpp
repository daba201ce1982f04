#include "control/ControllerParams.h"

#include "control/ParameterTable.h"

#include <cstdio>
#include <string>

namespace nicer::control {

namespace {

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

/// The value as the errors show it: the period in milliseconds, counts as whole numbers.
std::string shown(const ParameterInfo& info, const ControllerParams& p) {
    switch (info.type) {
    case ParameterType::Count:
        return std::to_string(static_cast<long long>(info.get(p)));
    case ParameterType::Duration:
        return fmt(info.get(p) * 1000.0) + " ms";
    case ParameterType::Real:
        break;
    }
    return fmt(info.get(p));
}

} // namespace

Result<void> validate(const ControllerParams& p) {
    for (const auto& info : parameterTable()) {
        if (!inRange(info, info.get(p))) {
            return Error{std::string(info.key) + " = " + shown(info, p) + " is out of range: it must be " +
                         rangeText(info)};
        }
    }
    if (p.minMultiplier > p.maxMultiplier) {
        return Error{"min-multiplier = " + fmt(p.minMultiplier) + " is greater than max-multiplier = " +
                     fmt(p.maxMultiplier) + ": it must be 1 <= min-multiplier <= max-multiplier <= 64"};
    }
    return {};
}

} // namespace nicer::control
