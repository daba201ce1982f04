#include "daemon/UserManagerBoundary.h"

#include <utility>

namespace nicer::daemon {

CgroupBoundary::CgroupBoundary(kernel::CgroupLayout layout, std::string managerCgroup,
                               std::string sliceCgroup)
    : m_layout(std::move(layout))
    , m_managerCgroup(std::move(managerCgroup))
    , m_sliceCgroup(std::move(sliceCgroup)) {}

Result<std::uint64_t> CgroupBoundary::managerCpuNSec() {
    return m_layout.readCpuUsageNSec(m_managerCgroup);
}

Result<bool> CgroupBoundary::workYieldsToSiblings() {
    return m_layout.readCpuIdle(m_sliceCgroup);
}

} // namespace nicer::daemon
