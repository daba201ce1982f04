#include "cpu/CpuUsage.h"

namespace nicer::cpu {

namespace {

std::uint64_t forwardDelta(std::uint64_t before, std::uint64_t after) {
    return after >= before ? after - before : 0;
}

struct Ticks {
    std::uint64_t idle = 0;
    std::uint64_t total = 0;

    void add(const CpuTimes& a, const CpuTimes& b) {
        // Per field, so that one counter going backwards cannot cancel another's progress.
        const std::uint64_t idleTicks = forwardDelta(a.idle, b.idle) + forwardDelta(a.iowait, b.iowait);
        const std::uint64_t busyTicks = forwardDelta(a.user, b.user) + forwardDelta(a.nice, b.nice) +
                                        forwardDelta(a.system, b.system) + forwardDelta(a.irq, b.irq) +
                                        forwardDelta(a.softirq, b.softirq) + forwardDelta(a.steal, b.steal);
        idle += idleTicks;
        total += idleTicks + busyTicks;
    }
};

} // namespace

CpuUsage usageBetween(const ProcStatSnapshot& before, const ProcStatSnapshot& after) {
    Ticks ticks;
    bool matched = false;
    for (const auto& [id, times] : after.perCpu) {
        if (const auto it = before.perCpu.find(id); it != before.perCpu.end()) {
            ticks.add(it->second, times);
            matched = true;
        }
    }
    if (!matched) {
        ticks.add(before.aggregate, after.aggregate);
    }

    CpuUsage usage;
    usage.cpuCount = after.perCpu.empty() ? 1 : static_cast<int>(after.perCpu.size());
    usage.totalTicks = ticks.total;
    if (ticks.total > 0) {
        usage.idle = static_cast<double>(ticks.idle) / static_cast<double>(ticks.total);
        usage.busy = 1.0 - usage.idle;
    }
    return usage;
}

} // namespace nicer::cpu
