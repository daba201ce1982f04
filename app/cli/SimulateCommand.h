#pragma once

#include "control/Controller.h"
#include "control/ControllerParams.h"

#include <string>

namespace nicer::cli {

struct SimulateOptions {
    std::string tracePath;
    control::ControllerParams params;
    control::Signal signal = control::Signal::Auto;
};

/// `nicer simulate --trace FILE [...]`: replays a trace through the controller, CSV on stdout.
int runSimulate(const SimulateOptions& options);

} // namespace nicer::cli
