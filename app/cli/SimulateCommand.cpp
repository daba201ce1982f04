#include "SimulateCommand.h"

#include "ExitCode.h"
#include "control/Controller.h"
#include "control/ControllerParams.h"
#include "control/IdleTrace.h"
#include "control/WorkRules.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

namespace nicer::cli {

namespace {

/// The thermal model's state between periods (ThermalModel).
struct Heat {
    const ThermalModel& model;
    double temperature;
    /// Advances one trace line with the work at @p workShare and your programs at @p userShare; the reading.
    double advance(double workShare, double userShare) {
        const double busy = std::min(1.0, userShare + std::min(workShare, 1.0 - userShare));
        temperature +=
            (model.ambient + model.gain * busy - temperature) * (1.0 - std::exp(-model.step / model.tau));
        return std::round(temperature);
    }
};

/// The trace of --trace: a file, or stdin for "-".
Result<std::vector<control::TracePeriod>> readTraceOption(const std::string& path) {
    if (path == "-") {
        return control::readTrace(std::cin, "<stdin>");
    }
    std::ifstream file(path);
    if (!file) {
        return Error{"cannot open trace " + path + ": " + std::strerror(errno)};
    }
    return control::readTrace(file, path);
}

} // namespace

int runSimulate(const SimulateOptions& o) {
    if (auto valid = control::validate(o.params); !valid) {
        std::cerr << "nicer simulate: " << valid.error().message << '\n';
        return kExitBadInput;
    }

    const auto trace = readTraceOption(o.tracePath);
    if (!trace) {
        std::cerr << "nicer simulate: " << trace.error().message << '\n';
        return kExitBadInput;
    }
    const std::string source = o.tracePath == "-" ? "<stdin>" : o.tracePath;
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
    const bool thermal = o.thermal.gain > 0.0;
    if (thermal && !(o.thermal.tau > 0.0 && o.thermal.step > 0.0)) {
        std::cerr << "nicer simulate: --thermal-tau and --step must be more than 0 seconds\n";
        return kExitBadInput;
    }
    control::WorkRules rules;
    Heat heat{o.thermal, o.thermal.ambient};
    double reading = std::round(heat.temperature);
    const double target =
        control::resolveTemperatureTarget(o.params.temperatureTarget, std::nullopt, std::nullopt);
    std::printf("step,idle%s%s%s,multiplier,overload_count,quota%s\n", splitOutput ? ",work,outside" : "",
                perPeriod ? ",signal" : "", pausedColumn ? ",paused" : "",
                thermal ? ",temperature,held_by" : "");
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
        double quota = paused ? 0.0 : s.quota;
        std::string heldBy;
        if (thermal) {
            // The rule reads the temperature the last period left, as nicerd reads its sensor.
            control::Surroundings now;
            now.temperature = reading;
            now.temperatureTarget = target;
            const auto hold = rules.step(now, o.params, o.thermal.step);
            if (!paused && !control::holdText(hold, quota).empty()) {
                heldBy = control::ruleName(hold.rule);
            }
            quota = std::min(quota, hold.cap);
            const double user = period.work ? std::max(0.0, 1.0 - period.idle - *period.work) : 0.0;
            reading = heat.advance(quota, user);
        }
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
        std::printf(",%.10g,%d,%.10g", s.multiplier, s.overloadCount, quota);
        if (thermal) {
            std::printf(",%.10g,%s", reading, heldBy.c_str());
        }
        std::printf("\n");
    }
    return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

} // namespace nicer::cli
