#pragma once

namespace nicer::cli {

/// Parses nicer's command line (every command and its options, `--help`, `--version`) and runs the command
/// given; returns the exit status (ExitCode.h).
int runCommandLine(int argc, char** argv);

} // namespace nicer::cli
