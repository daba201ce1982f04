#pragma once

#include "util/Result.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace nicer::kernel {

/// Cumulative CPU time counters of one `cpu` line of /proc/stat, in USER_HZ ticks.
struct CpuTimes {
    std::uint64_t user = 0;
    std::uint64_t nice = 0;
    std::uint64_t system = 0;
    std::uint64_t idle = 0;
    std::uint64_t iowait = 0;
    std::uint64_t irq = 0;
    std::uint64_t softirq = 0;
    std::uint64_t steal = 0;
    std::uint64_t guest = 0;     ///< already counted in user
    std::uint64_t guestNice = 0; ///< already counted in nice

    /// Time the CPU had nothing to run: idle + iowait.
    std::uint64_t idleTime() const { return idle + iowait; }
    /// All time; guest and guest_nice are left out because the kernel already adds them to user and nice.
    std::uint64_t totalTime() const { return user + nice + system + idle + iowait + irq + softirq + steal; }

    bool operator==(const CpuTimes&) const = default;
};

/// The `cpu` lines of one read of /proc/stat.
struct ProcStatSnapshot {
    CpuTimes aggregate;             ///< the `cpu` line: all CPUs together
    std::map<int, CpuTimes> perCpu; ///< the `cpuN` lines of the CPUs online at the time of the read
};

/// Parses the text of /proc/stat. Lines other than `cpu...` are ignored; a `cpu` line needs at least the
/// four fields user, nice, system and idle (older kernels have fewer than ten). Errors name @p source and
/// the line.
Result<ProcStatSnapshot> parseProcStat(std::string_view text, std::string_view source = "/proc/stat");

/// Reads and parses the file at @p path (normally /proc/stat).
Result<ProcStatSnapshot> readProcStat(const std::string& path);

} // namespace nicer::kernel
