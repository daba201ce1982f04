#include "actuator/SliceMemoryLimit.h"

#include "actuator/ActuatorNote.h"
#include "api/MemoryLimit.h"

#include <algorithm>
#include <cmath>

namespace nicer::actuator {

MemoryLimit memoryLimitFor(std::uint64_t totalBytes, double percent) {
    MemoryLimit limit;
    if (!(percent < 100.0) || totalBytes == 0) {
        return limit;
    }
    limit.percent = std::max(percent, 0.0);
    limit.max =
        static_cast<std::uint64_t>(std::llround(static_cast<double>(totalBytes) * limit.percent / 100.0));
    limit.high =
        static_cast<std::uint64_t>(std::llround(static_cast<double>(limit.max) * api::kMemoryHighShare));
    return limit;
}

std::uint64_t memoryHighFor(std::uint64_t totalBytes, const MemoryLimit& fence, double share) {
    if (!(share < 1.0) || totalBytes == 0) {
        return fence.high;
    }
    const auto bytes =
        static_cast<std::uint64_t>(std::llround(static_cast<double>(totalBytes) * std::max(share, 0.0)));
    return std::min(bytes, fence.high);
}

MemoryLimitOutcome applyMemoryLimit(usermanager::UnitManager& units, const kernel::CgroupLayout& layout,
                                    const std::string& slice, const std::string& cgroup,
                                    const MemoryLimit& limit) {
    auto set = units.setUnitProperties(slice, {{"MemoryHigh", limit.high}, {"MemoryMax", limit.max}});
    if (limit.none()) {
        return {}; // a refusal leaves no limit, which is what was asked for
    }
    if (!set) {
        return {kNoMemoryLimit, memoryLimitRefusedNote(limit.percent, limit.max, set.error().message)};
    }
    if (!cgroup.empty() && !layout.memoryControllerAvailable(cgroup)) {
        return {kNoMemoryLimit, memoryNotDelegatedNote(limit.percent, limit.max)};
    }
    return {limit.max, {}};
}

} // namespace nicer::actuator
