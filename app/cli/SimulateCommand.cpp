#include "SimulateCommand.h"

#include "ExitCode.h"
#include "control/Controller.h"
#include "control/IdleTrace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

namespace nicer::cli {

CLI::App* addSimulateCommand(CLI::App& parent, SimulateOptions& o) {
    auto* cmd =
        parent.add_subcommand("simulate", "Replay an idle trace through the controller (CSV on stdout)");
    cmd->footer(
        "The trace holds one idle fraction of the whole machine (0..1) per line; blank lines and # comments\n"
        "are ignored, and a CSV with an 'idle' column in its header is accepted. '-' reads stdin.\n"
        "Output columns: step,idle,multiplier,overload_count,quota.");
    auto& p = o.params;
    cmd->add_option("--trace", o.tracePath, "Idle trace to replay")->required();
    cmd->add_option("--reserve-band", p.reserveBand, "Idle share of the machine kept in reserve, in (0, 0.5]")
        ->capture_default_str();
    cmd->add_option("--min-multiplier", p.minMultiplier, "Smallest reserve-band multiplier, 1..64")
        ->capture_default_str();
    cmd->add_option("--max-multiplier", p.maxMultiplier, "Largest reserve-band multiplier, min..64")
        ->capture_default_str();
    cmd->add_option("--overload-threshold", p.overloadThreshold,
                    "No-idle periods tolerated before the work is stopped, >= 0")
        ->capture_default_str();
    cmd->add_option("--idle-epsilon", p.idleEpsilon, "Idle at or below this counts as none, in [0, 0.5)")
        ->capture_default_str();
    return cmd;
}

int runSimulate(const SimulateOptions& o) {
    if (auto valid = control::validate(o.params); !valid) {
        std::cerr << "nicer simulate: " << valid.error().message << '\n';
        return kExitBadInput;
    }

    std::ifstream file;
    std::istream* in = &std::cin;
    std::string source = "<stdin>";
    if (o.tracePath != "-") {
        file.open(o.tracePath);
        if (!file) {
            std::cerr << "nicer simulate: cannot open trace " << o.tracePath << ": " << std::strerror(errno)
                      << '\n';
            return kExitBadInput;
        }
        in = &file;
        source = o.tracePath;
    }
    const auto trace = control::readIdleTrace(*in, source);
    if (!trace) {
        std::cerr << "nicer simulate: " << trace.error().message << '\n';
        return kExitBadInput;
    }

    control::Controller controller(o.params);
    std::printf("step,idle,multiplier,overload_count,quota\n");
    std::size_t step = 0;
    for (const double idle : *trace) {
        const auto& s = controller.step(idle);
        std::printf("%zu,%.10g,%.10g,%d,%.10g\n", step++, idle, s.multiplier, s.overloadCount, s.quota);
    }
    return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

} // namespace nicer::cli
