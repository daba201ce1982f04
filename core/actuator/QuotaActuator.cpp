#include "actuator/QuotaActuator.h"

#include <algorithm>
#include <cmath>

namespace nicer::actuator {

std::uint64_t quotaPerSecUSec(double quota, int cpuCount) {
    const double usec = std::round(std::clamp(quota, 0.0, 1.0) * std::max(cpuCount, 1) * 1e6);
    return std::max(kMinQuotaPerSecUSec, static_cast<std::uint64_t>(usec));
}

} // namespace nicer::actuator
