#pragma once

#include "kernel/ProcStat.h"

#include <cstdint>

namespace nicer::cpu {

/// How the whole machine spent one period.
struct CpuUsage {
    double idle = 0.0;            ///< idle + iowait over all time, 0..1
    double busy = 0.0;            ///< 1 - idle
    int cpuCount = 0;             ///< CPUs online at the end of the period
    std::uint64_t totalTicks = 0; ///< ticks the fractions were computed from
};

/**
 * The machine's usage between two reads of /proc/stat. Pure.
 *
 * Sums the per-CPU deltas of the CPUs present in both reads, so a CPU that goes offline or comes online in
 * between adds nothing to this period instead of a jump; falls back to the aggregate line when the reads
 * share no per-CPU line. A counter that went backwards (a kernel quirk after hotplug or on some hypervisors)
 * counts as zero. totalTicks == 0 means no time was seen to pass: the fractions are then meaningless.
 */
CpuUsage usageBetween(const kernel::ProcStatSnapshot& before, const kernel::ProcStatSnapshot& after);

} // namespace nicer::cpu
