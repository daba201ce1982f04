#include "control/ControllerParams.h"

#include "control/ParameterTable.h"
#include "util/Text.h"

#include <string>
#include <utility>

namespace nicer::control {

namespace {

/// The value as the errors show it: the period in milliseconds, counts as whole numbers.
std::string shown(const ParameterInfo& info, const ControllerParams& p) {
    switch (info.type) {
    case ParameterType::Count:
        return std::to_string(static_cast<long long>(info.get(p)));
    case ParameterType::Duration:
        return text::shortNumber(info.get(p) * 1000.0) + " ms";
    case ParameterType::Real:
    case ParameterType::Hours: // checked when set: never out of range
        break;
    }
    return text::shortNumber(info.get(p));
}

} // namespace

Result<void> validate(const ControllerParams& p) {
    // The gap below the lowest temperature target has reasons of its own to tell (inRange() refuses it too).
    for (const auto& [key, target] : {std::pair{"temperature-target", p.temperatureTarget},
                                      std::pair{"away-temperature-target", p.awayTemperatureTarget}}) {
        if (target > 0.0 && target < kLowestTemperatureTarget) {
            return Error{
                std::string(key) + " = " + text::shortNumber(target) +
                    " °C is too low: it must be 0 (chosen from the sensor's own limits) or at least " +
                    text::shortNumber(kLowestTemperatureTarget) + " °C, which an idle CPU stays under",
                ErrorKind::InvalidInput};
        }
    }
    for (const auto& info : parameterTable()) {
        if (info.type != ParameterType::Hours && !inRange(info, info.get(p))) {
            return Error{std::string(info.key) + " = " + shown(info, p) + " is out of range: it must be " +
                             rangeText(info),
                         ErrorKind::InvalidInput};
        }
    }
    if (p.minMultiplier > p.maxMultiplier) {
        return Error{"min-multiplier = " + text::shortNumber(p.minMultiplier) +
                         " is greater than max-multiplier = " + text::shortNumber(p.maxMultiplier) +
                         ": it must be 1 <= min-multiplier <= max-multiplier <= 64",
                     ErrorKind::InvalidInput};
    }
    return {};
}

} // namespace nicer::control
