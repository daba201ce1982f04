#pragma once

// A test whose prerequisite is missing on this machine (no IPv6 loopback, no cgroup v2 freezer, ...) is
// skipped, never passed: NICER_SKIP asks for a marker that ctest's SKIP_REGULAR_EXPRESSION (set for every
// discovered test in tests/CMakeLists.txt) turns into "Skipped", with the reason in the test's output.
// Catch2 v2 has no skip of its own.
//
// ctest skips on the marker whatever the exit code, so a skip must not hide a failure: the marker is printed
// when the test case ends (tests/Skip.cpp, a Catch2 listener), and only if none of its assertions failed,
// before the skip or after it (a guard's destructor). Otherwise the skip is refused with a message and the
// test fails. Skip before asserting anything that the skip makes moot.

#include <sstream>
#include <string>

#define NICER_SKIP_MARKER "NICER-TEST-SKIPPED "

namespace nicer::test {

/// Marks the running test case skipped for @p reason (tests/Skip.cpp); NICER_SKIP calls it.
void skipTestCase(const std::string& reason);

} // namespace nicer::test

/// Ends the current test case as skipped, saying why; a failed assertion in the test case makes it fail
/// instead.
#define NICER_SKIP(reason)                                                                                   \
    do {                                                                                                     \
        std::ostringstream nicerSkipReason;                                                                  \
        nicerSkipReason << reason;                                                                           \
        nicer::test::skipTestCase(nicerSkipReason.str());                                                    \
        return;                                                                                              \
    } while (false)
