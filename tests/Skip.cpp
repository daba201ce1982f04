// NICER_SKIP's listener (tests/Skip.h): prints the skip marker when a skipped test case ends with no failed
// assertion, and refuses the skip otherwise.

#include "Skip.h"

// Catch2 v2 declares its listener base only with this, outside the TU of its main.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <iostream>
#include <optional>

namespace nicer::test {
namespace {

/// The reason the running test case asked to be skipped for, if it did.
std::optional<std::string>& pendingSkip() {
    static std::optional<std::string> reason;
    return reason;
}

class SkipListener : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;

    void testCaseStarting(const Catch::TestCaseInfo& info) override {
        TestEventListenerBase::testCaseStarting(info);
        pendingSkip().reset();
    }

    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        if (auto& reason = pendingSkip()) {
            const std::size_t failed = stats.totals.assertions.failed;
            if (failed == 0) {
                // The case's name after the reason: a run of a whole executable names what skipped.
                std::cout << NICER_SKIP_MARKER << *reason << " (" << stats.testInfo.name << ")" << std::endl;
            } else {
                std::cout << "Not skipped (" << *reason << "): " << failed
                          << " assertion(s) of this test case failed, so it fails" << std::endl;
            }
            reason.reset();
        }
        TestEventListenerBase::testCaseEnded(stats);
    }
};

CATCH_REGISTER_LISTENER(SkipListener)

} // namespace

void skipTestCase(const std::string& reason) {
    pendingSkip() = reason;
}

} // namespace nicer::test
