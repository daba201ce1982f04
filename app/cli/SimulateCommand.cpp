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
        parent.add_subcommand("simulate", "Replay a CPU trace through the controller (CSV on stdout)");
    cmd->footer(
        "The trace holds one idle fraction of the whole machine (0..1) per line; blank lines and # comments\n"
        "are ignored, and a CSV with an 'idle' column in its header is accepted. A CSV with 'work'\n"
        "(or 'background') and 'outside' columns too, shares of the machine used by the work and\n"
        "outside the user manager, can be replayed with the split signal; 'signal' (machine or outside,\n"
        "followed by --signal auto) and 'paused' (0 or 1) columns too: `nicer history` writes such a\n"
        "trace. '-' reads stdin.\n"
        "Output columns: step,idle,multiplier,overload_count,quota; with the outside signal\n"
        "step,idle,work,outside,multiplier,overload_count,quota, with signal and paused after outside when\n"
        "the trace has them.");
    auto& p = o.params;
    cmd->add_option("--trace", o.tracePath, "Trace to replay")->required();
    cmd->add_option_function<std::string>(
           "--signal",
           [&o](const std::string& text) {
               const auto signal = control::parseSignal(text);
               if (!signal) {
                   throw CLI::ValidationError("--signal", "'" + text + "' is not auto, machine or outside");
               }
               o.signal = *signal;
           },
           "What the controller answers: machine (the thesis: the whole machine's idle time), outside (only "
           "the demand from outside the user manager; needs the trace's work and outside columns), auto "
           "(outside when the trace has those columns)")
        ->default_str("auto");
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
    const auto trace = control::readTrace(*in, source);
    if (!trace) {
        std::cerr << "nicer simulate: " << trace.error().message << '\n';
        return kExitBadInput;
    }
    const bool split = !trace->empty() && trace->front().work.has_value();
    if (o.signal == control::Signal::Outside && !split) {
        std::cerr << "nicer simulate: --signal outside needs the work's share and the outside share of every "
                     "period, but "
                  << source << " has no 'work' and 'outside' columns; record them or use --signal machine\n";
        return kExitBadInput;
    }
    // Auto follows the trace's own signal column where it has one (nicerd's choice, period by period), else
    // answers the outside part whenever the trace has it.
    const bool perPeriod = o.signal == control::Signal::Auto && !trace->empty() && trace->front().signal;
    const bool pausedColumn = !trace->empty() && trace->front().paused;
    const auto answersOutside = [&](const control::TracePeriod& period) {
        if (o.signal != control::Signal::Auto) {
            return o.signal == control::Signal::Outside;
        }
        return period.signal ? *period.signal == control::Signal::Outside : split;
    };
    const bool splitOutput = split && o.signal != control::Signal::Machine;

    control::Controller controller(o.params);
    std::printf("step,idle%s%s%s,multiplier,overload_count,quota\n", splitOutput ? ",work,outside" : "",
                perPeriod ? ",signal" : "", pausedColumn ? ",paused" : "");
    std::size_t step = 0;
    bool wasPaused = false;
    for (const auto& period : *trace) {
        const bool paused = period.paused.value_or(false);
        const bool outside = answersOutside(period);
        // As nicerd: a paused period holds the controller with no quota, and the work resumes afresh.
        if (!paused) {
            if (wasPaused) {
                controller.reset();
            }
            if (outside) {
                controller.stepOutside(period.idle, *period.work, *period.outside);
            } else {
                controller.step(period.idle);
            }
        }
        wasPaused = paused;
        const auto& s = controller.state();
        std::printf("%zu,%.10g", step++, period.idle);
        if (splitOutput) {
            std::printf(",%.10g,%.10g", *period.work, *period.outside);
        }
        if (perPeriod) {
            std::printf(",%s", std::string(control::signalName(outside ? control::Signal::Outside
                                                                       : control::Signal::Machine))
                                   .c_str());
        }
        if (pausedColumn) {
            std::printf(",%d", paused ? 1 : 0);
        }
        std::printf(",%.10g,%d,%.10g\n", s.multiplier, s.overloadCount, paused ? 0.0 : s.quota);
    }
    return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

} // namespace nicer::cli
