// `nicer history`'s trace, written from a real ControlLoop's periods, replayed by the `nicer simulate`
// executable: nicerd's quotas back, period by period.
#include "api/HistoryCsv.h"
#include "cli/RunCommand.h"
#include "control/ParameterTable.h"
#include "control/WorkRules.h"
#include "daemon/ControlLoop.h"
#include "fakes/FakeActuator.h"
#include "fakes/FakeMachine.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

using nicer::api::Sample;
using nicer::test::parseCsv;
using nicer::test::runCommand;

namespace {

using nicer::test::kNicer;

/// One period of the recorded run: what the machine did, and what nicerd was told and read.
struct RecordedPeriod {
    nicer::test::MachinePeriod machine;
    bool cpuIdle; ///< the work's slice has cpu.idle 1: auto answers the outside part
    bool paused;  ///< `nicer pause` before the period, `nicer resume` otherwise
    std::optional<double> temperature;
    /// Whether the volunteer was here: the profile in force.
    nicer::control::Presence presence = nicer::control::Presence::Away;
};

/// The loop's history over @p periods, as nicerd would have recorded it with @p params.
std::vector<Sample> record(const nicer::control::ControllerParams& params,
                           const std::vector<RecordedPeriod>& periods) {
    nicer::test::StatFile stat;
    nicer::test::TwoCpuMachine machine(stat);
    nicer::test::FakeActuator actuator;
    nicer::test::FakeBoundary boundary;
    nicer::daemon::ControlLoop loop(nicer::cpu::CpuSampler(stat.path()), params, actuator, periods.size(),
                                    nicer::control::Signal::Auto, &boundary);
    REQUIRE(loop.prime().ok());
    nicer::control::Surroundings surroundings;
    std::uint64_t timeUSec = 1'795'000'000'000'000;
    for (const auto& period : periods) {
        if (period.paused) {
            REQUIRE(loop.pause().ok());
        } else {
            loop.resume();
        }
        boundary.cpuIdle = period.cpuIdle;
        surroundings.temperature = period.temperature;
        // As nicerd's RuleSources: the profile in force chooses the temperature target.
        surroundings.presence = period.presence;
        surroundings.temperatureTarget = nicer::control::resolveTemperatureTarget(
            nicer::control::profileFor(params, period.presence).temperatureTarget, std::nullopt, std::nullopt,
            period.presence != nicer::control::Presence::Away);
        nicer::test::advancePeriod(machine, actuator, boundary, period.machine);
        timeUSec += static_cast<std::uint64_t>(params.period.count()) * 1000;
        const auto sample = loop.tick(timeUSec, surroundings);
        INFO((sample ? std::string() : sample.error().message));
        REQUIRE(sample.ok());
        REQUIRE(actuator.applied().back().quota == sample->quota);
    }
    return {loop.history().begin(), loop.history().end()};
}

/// `nicer simulate`'s options for @p params, from the parameters' table (the period is --step).
std::string parameterOptions(const nicer::control::ControllerParams& params) {
    std::string options;
    for (const auto& info : nicer::control::parameterTable()) {
        if (info.type == nicer::control::ParameterType::Duration) {
            continue;
        }
        if (info.type == nicer::control::ParameterType::Hours) {
            options += std::string(" --") + info.key + " '" + info.getText(params) + "'";
            continue;
        }
        char value[32];
        std::snprintf(value, sizeof value, "%.17g", info.get(params));
        options += std::string(" --") + info.key + " " + value;
    }
    char step[32];
    std::snprintf(step, sizeof step, "%.17g", static_cast<double>(params.period.count()) / 1000.0);
    return options + " --step " + step;
}

/// @p csv without its column @p name.
std::string withoutColumn(const std::string& csv, const std::string& name) {
    const auto rows = parseCsv(csv);
    const auto at = std::find(rows.front().begin(), rows.front().end(), name) - rows.front().begin();
    std::string text;
    for (auto row : rows) {
        row.erase(row.begin() + at);
        for (std::size_t i = 0; i < row.size(); ++i) {
            text += (i == 0 ? "" : ",") + row[i];
        }
        text += '\n';
    }
    return text;
}

/// The rows `nicer simulate` printed for the trace @p csv, header first.
std::vector<std::vector<std::string>> simulate(const std::string& csv, const std::string& options) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("nicer-history-replay-" + std::to_string(::getpid()) + ".csv");
    std::ofstream(path) << csv;
    const auto r = runCommand(kNicer + " simulate --trace " + path.string() + options);
    std::filesystem::remove(path);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    return parseCsv(r.out);
}

/// How `nicer simulate` prints a number.
std::string printed(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", v);
    return text;
}

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE(it != header.end());
    return static_cast<std::size_t>(it - header.begin());
}

/// The replayed rows' quotas, for comparing replays.
std::vector<std::string> quotas(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::string> out;
    const auto q = column(rows.front(), "quota");
    for (std::size_t i = 1; i < rows.size(); ++i) {
        out.push_back(rows[i].at(q));
    }
    return out;
}

} // namespace

TEST_CASE("nicer history's trace of a loop replays in nicer simulate to the loop's own decisions",
          "[history][simulate]") {
    nicer::control::ControllerParams params;
    params.reserveBand = 0.0625;
    params.maxMultiplier = 8;
    params.overloadThreshold = 2;
    params.multiplierDecay = 0.5;
    params.temperatureTarget = 70.0;
    params.awayTemperatureTarget = 70.0;
    params.maxShare = 0.3; // while you're here
    params.resumeDelay = 4.0;
    params.period = std::chrono::milliseconds(2000);
    REQUIRE(nicer::control::validate(params).ok());

    // Work, your programs, the outside; cpu.idle; paused; the CPU's temperature.
    const std::vector<RecordedPeriod> periods{
        // The machine signal (no cpu.idle), then your programs take every CPU: overloads, a stop.
        {{0.1, 0.2, 0.0}, false, false, std::nullopt},
        {{0.3, 0.2, 0.1}, false, false, std::nullopt},
        {{0.2, 0.8, 0.0}, false, false, std::nullopt},
        {{0.0, 1.0, 0.0}, false, false, std::nullopt},
        {{0.0, 0.9, 0.1}, false, false, std::nullopt},
        // cpu.idle written: the outside part is answered; your programs cost the work nothing.
        {{0.1, 0.9, 0.0}, true, false, std::nullopt},
        {{0.3, 0.3, 0.1}, true, false, std::nullopt},
        {{0.4, 0.1, 0.3}, true, false, std::nullopt},
        // Paused: the loop keeps sampling, the controller holds; then resumed, afresh.
        {{0.0, 0.1, 0.9}, true, true, std::nullopt},
        {{0.0, 0.2, 0.2}, true, true, 60.0},
        {{0.0, 0.0, 1.0}, false, true, std::nullopt},
        {{0.0, 0.2, 0.4}, true, false, 66.0},
        {{0.3, 0.1, 0.1}, true, false, 69.0},
        // The work heats the CPU over its target: the temperature rule holds the work under the controller.
        {{0.5, 0.1, 0.0}, true, false, 73.0},
        {{0.5, 0.1, 0.0}, true, false, 74.0},
        {{0.4, 0.1, 0.1}, false, false, 74.0},
        {{0.4, 0.1, 0.1}, true, false, 73.0},
        // Far over it: paused by the rule for the resume delay, then given back.
        {{0.4, 0.1, 0.0}, true, false, 76.0},
        {{0.0, 0.1, 0.0}, true, false, 68.0},
        {{0.0, 0.1, 0.0}, true, false, 66.0},
        {{0.0, 0.1, 0.0}, true, true, 64.0},
        {{0.0, 0.1, 0.1}, true, false, 63.0},
        {{0.2, 0.1, 0.1}, true, false, std::nullopt},
        {{0.3, 0.1, 0.6}, true, false, 62.0},
        // You come back: the here profile's largest share holds the work, until you leave again.
        {{0.6, 0.1, 0.0}, true, false, 60.0, nicer::control::Presence::Here},
        {{0.6, 0.1, 0.1}, true, false, 60.0, nicer::control::Presence::Here},
        {{0.6, 0.1, 0.1}, true, false, 60.0, nicer::control::Presence::Unknown},
        {{0.6, 0.1, 0.1}, true, false, 60.0},
    };
    const auto history = record(params, periods);
    REQUIRE(history.size() == periods.size());

    // The run exercises what a replay must follow: pauses with a quota to hold, the resume, both signals,
    // the rule's hold and its pause.
    const auto any = [&](auto predicate) { return std::any_of(history.begin(), history.end(), predicate); };
    bool pausedAQuota = false;
    for (std::size_t i = 1; i < history.size(); ++i) {
        pausedAQuota =
            pausedAQuota || (history[i].paused && !history[i - 1].paused && history[i - 1].quota > 0.0);
    }
    CHECK(pausedAQuota);
    CHECK(any([](const Sample& s) { return s.outsideSignal && !s.paused && s.quota > 0.0; }));
    CHECK(any([](const Sample& s) { return !s.outsideSignal && s.quota == 0.0 && !s.paused; }));
    CHECK(any([](const Sample& s) { return s.heldBy == "temperature" && s.quota > 0.0; }));
    CHECK(any([](const Sample& s) { return s.heldBy == "temperature" && s.quota == 0.0; }));
    CHECK(any([](const Sample& s) { return s.heldBy == "profile" && s.quota == 0.3; }));

    const std::string csv = nicer::api::historyCsv(history);
    const auto trace = parseCsv(csv);
    REQUIRE(trace.front() == std::vector<std::string>{"time", "idle", "work", "outside", "signal", "paused",
                                                      "temperature", "presence", "multiplier",
                                                      "overload_count", "quota"});
    const std::string options = parameterOptions(params);
    const auto rows = simulate(csv, options);
    REQUIRE(rows.size() == history.size() + 1);
    const auto& header = rows.front();
    CHECK(header == std::vector<std::string>{"step", "idle", "work", "outside", "signal", "paused",
                                             "multiplier", "overload_count", "quota", "temperature",
                                             "held_by"});
    for (std::size_t i = 0; i < history.size(); ++i) {
        CAPTURE(i);
        const auto& row = rows[i + 1];
        const auto& s = history[i];
        REQUIRE(row.size() == header.size());
        CHECK(row[column(header, "quota")] == printed(s.quota));
        CHECK(row[column(header, "multiplier")] == printed(s.multiplier));
        CHECK(row[column(header, "overload_count")] == std::to_string(s.overloadCount));
        CHECK(row[column(header, "held_by")] == s.heldBy);
    }

    // Each column the replay follows changes the quotas here: a replay that ignored one would fail above.
    const auto recorded = quotas(rows);
    CHECK(quotas(simulate(withoutColumn(csv, "paused"), options)) != recorded);
    CHECK(quotas(simulate(withoutColumn(csv, "temperature"), options)) != recorded);
    CHECK(quotas(simulate(withoutColumn(csv, "presence"), options)) != recorded);
    CHECK(quotas(simulate(csv, options + " --signal machine")) != recorded);
    CHECK(quotas(simulate(csv, parameterOptions(nicer::control::ControllerParams{}))) != recorded);
}

TEST_CASE("nicer history's CSV leaves a temperature empty without a sensor, and the split columns out when "
          "a period lacks them",
          "[history]") {
    Sample measured;
    measured.timeUSec = 1'795'000'000'123'456;
    measured.idle = 0.1;
    measured.background = 0.3;
    measured.outside = 0.2;
    measured.outsideSignal = true;
    measured.temperature = 71.25;
    measured.presence = nicer::control::Presence::Here;
    measured.multiplier = 2.5;
    measured.overloadCount = 1;
    measured.quota = 0.1;
    Sample blind;
    blind.timeUSec = measured.timeUSec + 1'000'000;
    blind.idle = 0.5;
    blind.paused = true;

    CHECK(nicer::api::historyCsv({measured}) ==
          "time,idle,work,outside,signal,paused,temperature,presence,multiplier,overload_count,quota\n"
          "2026-11-18T11:06:40.123Z,0.10000000000000001,0.29999999999999999,0.20000000000000001,outside,0,"
          "71.25,here,2.5,1,0.10000000000000001\n");
    CHECK(nicer::api::historyCsv({measured, blind}) ==
          "time,idle,signal,paused,temperature,presence,multiplier,overload_count,quota\n"
          "2026-11-18T11:06:40.123Z,0.10000000000000001,outside,0,71.25,here,2.5,1,0.10000000000000001\n"
          "2026-11-18T11:06:41.123Z,0.5,machine,1,,unknown,1,0,0\n");
    CHECK(nicer::api::historyHasSplit({measured}));
    CHECK_FALSE(nicer::api::historyHasSplit({measured, blind}));
}
