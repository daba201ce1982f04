#pragma once

// What runs in nicer's slice, asked of the real user manager: the integration tests' view of the work.

#include "kernel/CgroupLayout.h"
#include "usermanager/SystemdUnitManager.h"

#include <catch2/catch.hpp>

#include <string>
#include <sys/types.h>
#include <vector>

namespace nicer::test {

/// nicerd's default slice.
inline const std::string kSlice = "nicer.slice";

/// The test's own connection to the user manager.
inline usermanager::SystemdUnitManager& units() {
    static auto manager = usermanager::SystemdUnitManager::connectUser();
    REQUIRE(manager.ok());
    return **manager;
}

/// The processes in nicer's slice right now (the volunteer work); none while the slice does not exist.
inline std::vector<pid_t> slicePids() {
    static const auto layout = kernel::CgroupLayout::detect();
    auto cgroup = units().controlGroup(kSlice);
    if (!cgroup || cgroup->empty()) {
        return {};
    }
    auto pids = layout->readPids(*cgroup);
    return pids ? *pids : std::vector<pid_t>{};
}

} // namespace nicer::test
