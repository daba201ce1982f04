#define CATCH_CONFIG_RUNNER
#include "CatchRunner.h"

#include <catch2/catch.hpp>

#include <iostream>

namespace {

/// Catch2's console reporter indents a test case's name after its first ": " and asserts (aborts) when that
/// indent passes its 80 columns: a failing test with such a name aborts the whole executable, its children
/// (nicerd, a BOINC client) left behind, instead of saying what failed. Refused before anything runs.
bool namesFitTheReporter() {
    constexpr std::size_t kLastIndent = CATCH_CONFIG_CONSOLE_WIDTH - 10;
    bool fit = true;
    for (const auto& test : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) {
        const auto colon = test.name.find(": ");
        if (colon != std::string::npos && colon + 2 > kLastIndent) {
            std::cerr
                << "the test case \"" << test.name << "\" has its first \": \" at column " << colon + 1
                << "; Catch2 aborts when it reports a failure of a name whose first \": \" is past column "
                << kLastIndent - 2 << ": reword it\n";
            fit = false;
        }
    }
    return fit;
}

} // namespace

int nicer::test::runCatch(int argc, char** argv) {
    if (!namesFitTheReporter()) {
        return 2;
    }
    return Catch::Session().run(argc, argv);
}
