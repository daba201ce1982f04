#pragma once

// A test whose prerequisite is missing on this machine (no IPv6 loopback, no cgroup v2 freezer, ...) is
// skipped, never passed: NICER_SKIP prints a marker that ctest's SKIP_REGULAR_EXPRESSION (set for every
// discovered test in tests/CMakeLists.txt) turns into "Skipped", with the reason in the test's output.
// Catch2 v2 has no skip of its own.

#include <iostream>

#define NICER_SKIP_MARKER "NICER-TEST-SKIPPED "

/// Ends the current test case as skipped, saying why.
#define NICER_SKIP(reason)                                                                                   \
    do {                                                                                                     \
        std::cout << NICER_SKIP_MARKER << reason << std::endl;                                               \
        return;                                                                                              \
    } while (false)
