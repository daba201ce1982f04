#include "cpu/DemandSplit.h"

#include <algorithm>

namespace nicer::cpu {

DemandSplit splitDemand(const CpuUsage& usage, double machineNSec, std::uint64_t workNSec,
                        std::optional<std::uint64_t> managerNSec) {
    DemandSplit d;
    d.idle = usage.idle;
    const double busy = std::clamp(usage.busy, 0.0, 1.0);
    const auto share = [machineNSec](std::uint64_t nsec) {
        return machineNSec > 0.0 ? static_cast<double>(nsec) / machineNSec : 0.0;
    };
    d.work = std::clamp(share(workNSec), 0.0, busy);
    if (!managerNSec) {
        d.inside = busy - d.work;
        return d;
    }
    const double manager = std::clamp(share(*managerNSec), d.work, busy);
    d.inside = manager - d.work;
    d.outside = busy - manager;
    d.split = true;
    return d;
}

} // namespace nicer::cpu
