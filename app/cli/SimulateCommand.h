#pragma once

#include "control/Controller.h"
#include "control/ControllerParams.h"

#include <string>

namespace nicer::cli {

/**
 * A first-order thermal model of the machine for `nicer simulate --thermal-gain`: the CPU's temperature
 * approaches ambient + gain x the busy share (the work's, as the loop capped it, and your programs', where
 * the trace has the work's column) with time constant tau, and the sensor reads whole degrees as coretemp
 * does. The temperature rule (control/WorkRules.h) then holds it at temperature-target.
 */
struct ThermalModel {
    double ambient = 40.0; ///< °C with the machine idle
    double gain = 0.0;     ///< °C the whole machine busy adds; 0: no model
    double tau = 10.0;     ///< seconds
};

/**
 * A memory model of the machine for `nicer simulate --memory-total`: your programs need foreground GiB
 * while the machine is busy (in proportion to the trace's busy share), the work wants work GiB and keeps
 * what its memory.high leaves it (the rest reclaimed at once, as to swap; an instance the rule ended holds
 * nothing), and programs beside the work wait on memory as the two together go over 95% of the total, all
 * the time once they fill it. The memory rule (control/MemoryLoop.h) then takes memory from the work.
 */
struct MemoryModel {
    double totalGiB = 0.0; ///< the machine's memory; 0: no model
    double workGiB = 0.0;
    double foregroundGiB = 0.0;
    int instances = 1; ///< the work's instances, sharing workGiB: what the rule may stop
    /// Seconds the work's memory takes to follow a lower memory.high (reclaim, swap-out); 0: at once. Less
    /// than 0: no swap, where memory.high takes nothing the work touched and only a stopped instance frees
    /// its share.
    double reclaimTau = 0.0;
};

struct SimulateOptions {
    std::string tracePath;
    control::ControllerParams params;
    control::Signal signal = control::Signal::Auto;
    ThermalModel thermal;
    MemoryModel memory;
    /// Seconds of one trace line (nicerd's period): the rules' clock and the thermal model's step.
    double stepSeconds = 1.0;
};

/// `nicer simulate --trace FILE [...]`: replays a trace through the controller, CSV on stdout.
int runSimulate(const SimulateOptions& options);

} // namespace nicer::cli
