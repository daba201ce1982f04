#include "actuator/SliceMemoryLimit.h"

#include "actuator/ActuatorNote.h"
#include "api/MemoryLimit.h"
#include "util/Log.h"

#include <algorithm>
#include <cmath>

namespace nicer::actuator {

MemoryLimit memoryLimitFor(std::uint64_t totalBytes, double percent, std::uint64_t swapBytes) {
    MemoryLimit limit;
    if (!(percent < 100.0) || totalBytes == 0) {
        return limit;
    }
    limit.percent = std::max(percent, 0.0);
    const auto share = [&](std::uint64_t bytes) {
        return static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) * limit.percent / 100.0));
    };
    limit.max = share(totalBytes);
    limit.high =
        static_cast<std::uint64_t>(std::llround(static_cast<double>(limit.max) * api::kMemoryHighShare));
    if (swapBytes > 0) {
        limit.swapMax = share(swapBytes);
    }
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
    auto set = units.setUnitProperties(
        slice, {{"MemoryHigh", limit.high}, {"MemoryMax", limit.max}, {"MemorySwapMax", limit.swapMax}});
    // systemd-oomd (Ubuntu, Fedora), when the swap runs out, kills among the cgroups below a unit with
    // ManagedOOMSwap=kill the one using the most swap: so the work is a candidate even where nothing else is.
    // On its own: a systemd older than 247 refuses it, and the limits above hold without it.
    if (auto oomd = units.setUnitProperties(slice, {{"ManagedOOMSwap", std::string("kill")}}); !oomd) {
        log::info() << "nicerd: " << slice << " is not pointed out to systemd-oomd: " << oomd.error().message;
    }
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
