#include "daemon/UserManagerBoundary.h"

#include <utility>

namespace nicer::daemon {

namespace {
/// The top-level cgroup of @p cgroup: "/nicer.slice" of "/nicer.slice/nicer-work@a.service/work".
std::string topLevel(const std::string& cgroup) {
    const auto end = cgroup.find('/', 1);
    return end == std::string::npos ? cgroup : cgroup.substr(0, end);
}
} // namespace

CgroupBoundary::CgroupBoundary(kernel::CgroupLayout layout, std::string managerCgroup,
                               std::string sliceCgroup)
    : m_layout(std::move(layout))
    , m_managerCgroup(std::move(managerCgroup))
    , m_sliceCgroup(std::move(sliceCgroup))
    , m_workInside(m_sliceCgroup.rfind(m_managerCgroup + "/", 0) == 0) {}

Result<std::uint64_t> CgroupBoundary::managerCpuNSec() {
    auto manager = m_layout.readCpuUsageNSec(m_managerCgroup);
    if (!manager || m_workInside) {
        return manager;
    }
    // The work runs outside the user manager (the root idle slice): counted in, as the split expects.
    auto work = m_layout.readCpuUsageNSec(m_sliceCgroup);
    if (!work) {
        return work.error();
    }
    return *manager + *work;
}

Result<bool> CgroupBoundary::workYieldsToSiblings() {
    return m_layout.readCpuIdle(m_workInside ? m_sliceCgroup : topLevel(m_sliceCgroup));
}

Result<bool> CgroupBoundary::workYieldsToEverything() {
    if (m_workInside) {
        return false;
    }
    return m_layout.readCpuIdle(topLevel(m_sliceCgroup));
}

} // namespace nicer::daemon
