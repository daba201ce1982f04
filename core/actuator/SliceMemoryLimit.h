#pragma once

#include "kernel/CgroupLayout.h"
#include "usermanager/UnitManager.h"

#include <cstdint>
#include <string>

namespace nicer::actuator {

/// systemd's "infinity" for MemoryHigh and MemoryMax: no limit.
inline constexpr std::uint64_t kNoMemoryLimit = UINT64_MAX;

/**
 * The memory limit of the work's slice, as a share of the machine's RAM (BOINC's "use at most N% of memory
 * when the computer is in use"). systemd-oomd watches the user manager's memory pressure and kills the
 * biggest offender in the session; with the work held below this limit, the work is what gets reclaimed and,
 * in the end, OOM-killed inside its own slice, not the user's programs.
 */
struct MemoryLimit {
    double percent = 100.0;              ///< of the machine's memory; 100: none
    std::uint64_t high = kNoMemoryLimit; ///< MemoryHigh in bytes
    std::uint64_t max = kNoMemoryLimit;  ///< MemoryMax in bytes
    /// MemorySwapMax in bytes: the same share of the machine's swap, so that the work's pages leave memory
    /// first (the memory rule lowers its MemoryHigh) but never fill the swap the desktop's pages need.
    std::uint64_t swapMax = kNoMemoryLimit;

    bool none() const { return max == kNoMemoryLimit; }
    bool operator==(const MemoryLimit&) const = default;
};

/// @p percent (0 to 100; 100 or more: none) of @p totalBytes as MemoryMax, api::kMemoryHighShare of it as
/// MemoryHigh, and @p percent of @p swapBytes (the machine's swap; 0: none, and no swap limit) as
/// MemorySwapMax.
MemoryLimit memoryLimitFor(std::uint64_t totalBytes, double percent, std::uint64_t swapBytes = 0);

/// The work's MemoryHigh for a profile's memory share (control::Profile::memoryShare): @p share of
/// @p totalBytes, never above the @p fence's own MemoryHigh; a share of 1 or more is the fence's.
std::uint64_t memoryHighFor(std::uint64_t totalBytes, const MemoryLimit& fence, double share);

/// What applyMemoryLimit() achieved.
struct MemoryLimitOutcome {
    std::uint64_t maxInForce = kNoMemoryLimit; ///< MemoryMax the kernel enforces; kNoMemoryLimit: none
    std::string note; ///< why the limit asked for is not in force (ActuatorNote.h); empty when it is
};

/// Sets MemoryHigh, MemoryMax and MemorySwapMax of @p slice (cgroup @p cgroup, empty: unknown) to @p limit;
/// without a limit, to infinity, which lifts one an earlier run left on the slice. Never fails: a limit that
/// systemd refuses, or that the kernel would not enforce (no memory controller delegated), is said in the
/// note, and the work runs without it.
MemoryLimitOutcome applyMemoryLimit(usermanager::UnitManager& units, const kernel::CgroupLayout& layout,
                                    const std::string& slice, const std::string& cgroup,
                                    const MemoryLimit& limit);

} // namespace nicer::actuator
