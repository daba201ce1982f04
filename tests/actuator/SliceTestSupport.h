#pragma once
// What the slice actuator's tests share: the slice's name, and a mountinfo read into a cgroup layout.

#include "kernel/CgroupLayout.h"

#include <catch2/catch.hpp>

#include <string>

namespace nicer::test {

inline const std::string kSlice = "nicer.slice";

/// The layout @p mountinfo describes; fails the test, with the reason, when it describes none.
inline kernel::CgroupLayout parseLayout(const std::string& mountinfo) {
    auto layout = kernel::CgroupLayout::parse(mountinfo);
    INFO((layout ? std::string() : layout.error().message));
    REQUIRE(layout.ok());
    return *layout;
}

} // namespace nicer::test
