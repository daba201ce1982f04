#pragma once

#include "kernel/CgroupLayout.h"
#include "util/Result.h"

#include <cstdint>
#include <string>

namespace nicer::daemon {

/**
 * What the split signal reads each period about the user manager the work runs under: the CPU time of
 * everything below it, and whether the kernel makes the work yield to its siblings there at once.
 */
class UserManagerBoundary {
public:
    virtual ~UserManagerBoundary() = default;
    /// CPU time used so far by everything under the user manager (the work included), in ns.
    virtual Result<std::uint64_t> managerCpuNSec() = 0;
    /// True while the work's slice has cpu.idle 1: its siblings win every contention with it, so only what
    /// runs outside the user manager needs the quota.
    virtual Result<bool> workYieldsToSiblings() = 0;
    /// True while the work runs in a top-level cgroup with cpu.idle 1 (the root idle slice): the kernel makes
    /// it yield at once to every program on the machine, so the quota need answer none of them.
    virtual Result<bool> workYieldsToEverything() { return false; }
};

/// The boundary as the kernel shows it: the user manager's cgroup and the work's slice's, both without root.
/// The work's cgroup may be outside the user manager (the root idle slice); its CPU time is then added to the
/// manager's, and its idle weight is read at the top level, where it counts.
class CgroupBoundary final : public UserManagerBoundary {
public:
    CgroupBoundary(kernel::CgroupLayout layout, std::string managerCgroup, std::string sliceCgroup);
    Result<std::uint64_t> managerCpuNSec() override;
    Result<bool> workYieldsToSiblings() override;
    Result<bool> workYieldsToEverything() override;

private:
    kernel::CgroupLayout m_layout;
    std::string m_managerCgroup;
    std::string m_sliceCgroup;
    bool m_workInside; ///< the work's cgroup is below the user manager's
};

} // namespace nicer::daemon
