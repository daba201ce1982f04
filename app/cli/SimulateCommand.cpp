#include "SimulateCommand.h"

#include "ExitCode.h"
#include "control/Controller.h"
#include "control/IdleTrace.h"
#include "control/ParameterTable.h"
#include "control/ParameterText.h"

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
    // The controller's parameters, from their table; a trace has no clock, so the period is not one.
    for (const auto& info : control::parameterTable()) {
        if (info.type == control::ParameterType::Duration) {
            continue;
        }
        const auto set = [&p, &info](double value) {
            if (auto done = info.set(p, value); !done) {
                throw CLI::ValidationError(std::string("--") + info.key, done.error().message);
            }
        };
        const std::string name = std::string("--") + info.key;
        CLI::Option* option = info.type == control::ParameterType::Count
                                  ? cmd->add_option_function<int>(
                                        name, [set](int v) { set(v); }, control::parameterHelp(info))
                                  : cmd->add_option_function<double>(name, set, control::parameterHelp(info));
        option->default_str(control::parameterAsText(info, p));
    }
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
