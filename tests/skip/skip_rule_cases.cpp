// Test cases for NICER_SKIP's rule (tests/Skip.h), hidden ([.]) from every normal run: check-skip-rule.sh
// runs each by name and checks its exit code and whether it printed the skip marker.

#include "Skip.h"

#include <catch2/catch.hpp>

namespace {

/// Fails a CHECK when it goes, as a guard that cleans up after a test and checks the cleanup can.
struct CheckingGuard {
    int cleaned = 1;
    ~CheckingGuard() { CHECK(cleaned == 0); }
};

} // namespace

TEST_CASE("a test case whose prerequisite is missing skips", "[.][skip-rule]") {
    NICER_SKIP("the prerequisite is missing " << 42);
}

TEST_CASE("a test case with a failed CHECK before its skip fails", "[.][skip-rule]") {
    const int answer = 41;
    CHECK(answer == 42);
    NICER_SKIP("the prerequisite is missing");
}

TEST_CASE("a test case with a failed CHECK after its skip fails", "[.][skip-rule]") {
    const CheckingGuard guard;
    NICER_SKIP("the prerequisite is missing");
}
