#include "cpu/CpuUsage.h"

#include <cstdint>
#include <initializer_list>
#include <utility>

namespace nicer::cpu {

namespace {

std::uint64_t forwardDelta(std::uint64_t before, std::uint64_t after) {
    return after >= before ? after - before : 0;
}

/// a + b, held at UINT64_MAX rather than wrapped: a sum that wrapped could make idle more than all ticks.
std::uint64_t sum(std::uint64_t a, std::uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

struct Ticks {
    std::uint64_t idle = 0;
    std::uint64_t total = 0;

    void add(const kernel::CpuTimes& a, const kernel::CpuTimes& b) {
        // Per field, so that one counter going backwards cannot cancel another's progress.
        const std::uint64_t idleTicks = sum(forwardDelta(a.idle, b.idle), forwardDelta(a.iowait, b.iowait));
        std::uint64_t busyTicks = 0;
        for (const auto& [before, after] :
             {std::pair{a.user, b.user}, std::pair{a.nice, b.nice}, std::pair{a.system, b.system},
              std::pair{a.irq, b.irq}, std::pair{a.softirq, b.softirq}, std::pair{a.steal, b.steal}}) {
            busyTicks = sum(busyTicks, forwardDelta(before, after));
        }
        idle = sum(idle, idleTicks);
        total = sum(total, sum(idleTicks, busyTicks));
    }
};

} // namespace

CpuUsage usageBetween(const kernel::ProcStatSnapshot& before, const kernel::ProcStatSnapshot& after) {
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
