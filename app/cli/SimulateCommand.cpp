#include "SimulateCommand.h"

#include "ExitCode.h"
#include "control/Controller.h"
#include "control/ControllerParams.h"
#include "control/IdleTrace.h"
#include "control/PeriodStep.h"
#include "control/WorkRules.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>

namespace nicer::cli {

namespace {

/// The thermal model's state between periods (ThermalModel).
struct Heat {
    const ThermalModel& model;
    double temperature;
    /// Advances one trace line of @p seconds with the work at @p workShare and your programs at @p userShare;
    /// the reading.
    double advance(double workShare, double userShare, double seconds) {
        const double busy = std::min(1.0, userShare + std::min(workShare, 1.0 - userShare));
        temperature +=
            (model.ambient + model.gain * busy - temperature) * (1.0 - std::exp(-seconds / model.tau));
        return std::round(temperature);
    }
};

/// The memory model's state between periods (MemoryModel).
struct Memory {
    const MemoryModel& model;
    double workHeld = 0.0; ///< GiB
    double ceiling = 0.0;  ///< GiB: the profile's share of the machine's memory, as nicerd's MemoryHigh

    bool on() const { return model.totalGiB > 0.0; }
    /// What the rule reads in @p period (into @p input), under the profile of @p params in force then.
    void read(control::PeriodInput& input, const control::TracePeriod& period,
              const control::ControllerParams& params) {
        if (!on()) {
            return;
        }
        const double total = model.totalGiB;
        ceiling = total * std::min(1.0, control::profileFor(params, input.surroundings.presence).memoryShare);
        const double busy = period.work ? std::max(0.0, 1.0 - period.idle - *period.work) : 1.0 - period.idle;
        const double need = model.foregroundGiB * std::clamp(busy, 0.0, 1.0) + workHeld;
        input.surroundings.memory = control::MemoryReading{
            .outsideStall = std::clamp((need - 0.95 * total) / (0.05 * total), 0.0, 1.0),
            .workBytes = bytes(workHeld),
            .ceilingBytes = bytes(ceiling),
            .workCanSwap = model.reclaimTau >= 0.0,
            .instances = model.instances,
            .availableBytes = bytes(std::max(0.0, total - need)),
            .totalBytes = bytes(total)};
    }
    /// The work after the rule's @p hold, @p seconds on: its running instances want their share, and a
    /// frozen one takes nothing more.
    void follow(const control::MemoryHold& hold, double seconds) {
        if (!on()) {
            return;
        }
        const double running = std::min(model.workGiB, ceiling) *
                               (model.instances - std::min(hold.instancesStopped, model.instances)) /
                               model.instances;
        const double limit = hold.limitBytes > 0 ? static_cast<double>(hold.limitBytes) / kGiB : ceiling;
        double target = std::min(running, limit);
        if (model.reclaimTau < 0.0) {
            target = std::min(running, std::max(target, workHeld)); // no swap: memory.high takes none of it
        }
        if (target < workHeld) {
            workHeld += (target - workHeld) *
                        (model.reclaimTau > 0.0 ? 1.0 - std::exp(-seconds / model.reclaimTau) : 1.0);
        } else if (hold.cap > 0.0) {
            workHeld = target;
        }
        workHeld = std::min(workHeld, running);
    }
    static constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    static std::uint64_t bytes(double gib) { return static_cast<std::uint64_t>(gib * kGiB); }
};

/// Whether the models' options can be (said on stderr when not): the step where the rules keep time
/// (@p timed), the thermal model's time constant, the memory model's sizes.
bool modelsValid(const SimulateOptions& o, bool timed) {
    if (timed && !(o.stepSeconds > 0.0)) {
        std::cerr << "nicer simulate: --step must be more than 0 seconds\n";
        return false;
    }
    if (o.thermal.gain > 0.0 && !(o.thermal.tau > 0.0)) {
        std::cerr << "nicer simulate: --thermal-tau must be more than 0 seconds\n";
        return false;
    }
    if (o.memory.totalGiB > 0.0 && (o.memory.workGiB < 0.0 || o.memory.foregroundGiB < 0.0)) {
        std::cerr << "nicer simulate: --memory-work and --memory-foreground must be 0 GiB or more\n";
        return false;
    }
    if (o.memory.instances < 1) {
        std::cerr << "nicer simulate: --memory-instances must be 1 or more\n";
        return false;
    }
    return true;
}

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

/// The columns `nicer simulate` prints beside step, idle and the decision (multiplier, overload_count,
/// quota).
struct Columns {
    bool split = false;       ///< work,outside
    bool signal = false;      ///< signal: the trace's own, followed period by period
    bool paused = false;      ///< paused
    bool temperature = false; ///< temperature,held_by at the end: the rule read temperatures
    bool memory = false;      ///< memory_stall,work_memory_gib,memory_hold at the very end: the memory model
};

void printHeader(const Columns& c) {
    std::printf("step,idle%s%s%s,multiplier,overload_count,quota%s%s\n", c.split ? ",work,outside" : "",
                c.signal ? ",signal" : "", c.paused ? ",paused" : "",
                c.temperature || c.memory ? ",temperature,held_by" : "",
                c.memory ? ",memory_stall,work_memory_gib,memory_hold" : "");
}

/// One line of the output: @p period of the trace, whether the controller answered the outside part, the
/// @p decision, the @p temperature shown (empty for none) and what the memory rule read (@p memory).
void printPeriod(const Columns& c, std::size_t step, const control::TracePeriod& period, bool outsideSignal,
                 const control::PeriodDecision& decision, std::optional<double> temperature,
                 const std::optional<control::MemoryReading>& memory) {
    std::printf("%zu,%.10g", step, period.idle);
    if (c.split) {
        std::printf(",%.10g,%.10g", *period.work, *period.outside);
    }
    if (c.signal) {
        const auto signal = outsideSignal ? control::Signal::Outside : control::Signal::Machine;
        std::printf(",%s", std::string(control::signalName(signal)).c_str());
    }
    if (c.paused) {
        std::printf(",%d", period.paused.value_or(false) ? 1 : 0);
    }
    std::printf(",%.10g,%d,%.10g", decision.controller.multiplier, decision.controller.overloadCount,
                decision.quota);
    if (c.temperature || c.memory) {
        std::printf(",");
        if (temperature) {
            std::printf("%.10g", *temperature);
        }
        std::printf(",%s", std::string(control::ruleName(decision.heldBy)).c_str());
    }
    if (c.memory && memory) {
        std::printf(",%.4g,%.4g,%s", memory->outsideStall,
                    static_cast<double>(memory->workBytes) / Memory::kGiB,
                    control::memoryStageName(decision.memory.stage));
    }
    std::printf("\n");
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

    const bool thermal = o.thermal.gain > 0.0;
    // Without the model, the temperatures the trace recorded (`nicer history`'s column) are what the rule
    // reads, as nicerd read its sensor.
    const bool recorded = !thermal && std::any_of(trace->begin(), trace->end(), [](const auto& period) {
        return period.temperature.has_value();
    });
    if (!modelsValid(o, thermal || recorded)) {
        return kExitBadInput;
    }
    control::PeriodStep periodStep(o.params);
    Heat heat{o.thermal, o.thermal.ambient};
    Memory memory{o.memory};
    double reading = std::round(heat.temperature);
    const Columns columns{.split = split && o.signal != control::Signal::Machine,
                          .signal = perPeriod,
                          .paused = pausedColumn,
                          .temperature = thermal || recorded,
                          .memory = memory.on()};
    printHeader(columns);
    std::size_t step = 0;
    for (const auto& period : *trace) {
        // As nicerd: one PeriodStep per period, paused where the trace says so.
        const bool paused = period.paused.value_or(false);
        if (paused) {
            periodStep.pause();
        } else {
            periodStep.resume();
        }
        control::PeriodInput input;
        input.idle = period.idle;
        input.work = period.work;
        input.outside = period.outside;
        input.outsideSignal = answersOutside(period);
        input.seconds = o.stepSeconds;
        // The rule reads the temperature the model's last period left, as nicerd reads its sensor.
        input.surroundings.temperature = thermal ? std::optional<double>(reading) : period.temperature;
        // The profile in force where the trace says it (`nicer history`'s presence column), as nicerd chose
        // it.
        input.surroundings.presence = period.presence.value_or(control::Presence::Unknown);
        input.surroundings.temperatureTarget = control::resolveTemperatureTarget(
            control::profileFor(o.params, input.surroundings.presence).temperatureTarget, std::nullopt,
            std::nullopt, input.surroundings.presence != control::Presence::Away);
        memory.read(input, period, o.params);
        const auto decision = periodStep.step(input);
        memory.follow(decision.memory, o.stepSeconds);
        if (thermal) {
            const double user = period.work ? std::max(0.0, 1.0 - period.idle - *period.work) : 0.0;
            reading = heat.advance(decision.quota, user, o.stepSeconds);
        }
        printPeriod(columns, step++, period, input.outsideSignal, decision,
                    thermal ? std::optional<double>(reading) : period.temperature, input.surroundings.memory);
    }
    return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

} // namespace nicer::cli
