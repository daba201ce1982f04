#pragma once

namespace nicer::test {

/// Catch2's session over the command line's arguments; its exit status. Catch2's runner is compiled once, in
/// CatchRunner.cpp, for every test executable: each main (test_main.cpp, integration_main.cpp,
/// tray/tray_test_main.cpp) prepares its environment and calls this.
int runCatch(int argc, char** argv);

} // namespace nicer::test
