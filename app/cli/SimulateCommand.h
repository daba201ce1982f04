#pragma once

#include "control/Controller.h"
#include "control/ControllerParams.h"

#include <CLI/CLI.hpp>

#include <string>

namespace nicer::cli {

struct SimulateOptions {
    std::string tracePath;
    control::ControllerParams params;
    control::Signal signal = control::Signal::Auto;
};

/// `nicer simulate --trace FILE [...]`: replays a trace through the controller, CSV on stdout.
CLI::App* addSimulateCommand(CLI::App& parent, SimulateOptions& options);
int runSimulate(const SimulateOptions& options);

} // namespace nicer::cli
