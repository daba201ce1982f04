#pragma once

#include "control/ControllerParams.h"

#include <CLI/CLI.hpp>

#include <string>

namespace nicer::cli {

struct SimulateOptions {
    std::string tracePath;
    control::ControllerParams params;
};

/// `nicer simulate --trace FILE [...]`: replays an idle trace through the controller, CSV on stdout.
CLI::App* addSimulateCommand(CLI::App& parent, SimulateOptions& options);
int runSimulate(const SimulateOptions& options);

} // namespace nicer::cli
