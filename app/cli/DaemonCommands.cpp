#include "DaemonCommands.h"

#include "BoincCommands.h"
#include "ExitCode.h"
#include "StatusJson.h"
#include "api/DownloadText.h"
#include "api/MemoryLimit.h"
#include "api/Placement.h"
#include "control/Controller.h"
#include "control/ParameterTable.h"
#include "control/ParameterText.h"
#include "control/Presence.h"
#include "control/WorkRules.h"
#include "dbus/client/DaemonClient.h"
#include "util/Text.h"
#include "util/WallClock.h"
#include "workload/WorkloadChooser.h"
#include "workload/WorkloadPresets.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

namespace nicer::cli {

namespace {

/// When `nicer pause` ends: --for's duration from @p now, --until's time, or none (until `nicer resume`).
Result<std::optional<wallclock::TimePoint>> pauseEnd(const DaemonCommandOptions& o,
                                                     wallclock::TimePoint now) {
    if (!o.pauseFor.empty()) {
        auto length = wallclock::parseDuration(o.pauseFor);
        if (!length) {
            return length.error().within("--for: ");
        }
        return std::optional(now + *length);
    }
    if (!o.pauseUntil.empty()) {
        auto until = wallclock::parseTime(o.pauseUntil, now);
        if (!until) {
            return until.error().within("--until: ");
        }
        return std::optional(*until);
    }
    return std::optional<wallclock::TimePoint>();
}

/// One line over all downloads, then the files that need attention (at most a few: it is a summary).
void printDownloads(const api::DaemonState& s) {
    std::size_t inPlace = 0, active = 0;
    std::uint64_t done = 0, total = 0;
    bool totalKnown = true;
    std::vector<const api::DownloadEntry*> failed;
    for (const auto& e : s.downloads) {
        inPlace += api::isDownloadInPlace(e.state);
        active += api::isDownloadActive(e.state);
        done += e.bytesDone;
        total += e.bytesTotal;
        totalKnown = totalKnown && e.bytesTotal > 0;
        if (e.state == api::DownloadState::Failed) {
            failed.push_back(&e);
        }
    }
    std::printf("  downloads    %zu of %zu files in place, %s of %s%s, %s/s now (bandwidth: %s)\n", inPlace,
                s.downloads.size(), text::humanBytes(double(done)).c_str(),
                text::humanBytes(double(total)).c_str(), totalKnown ? "" : " known",
                text::humanBytes(s.downloadRate).c_str(),
                api::bandwidthModeText(api::bandwidthOf(s)).c_str());
    if (active > 0) {
        std::printf("               %zu downloading or waiting for a stream\n", active);
    }
    constexpr std::size_t kShown = 5;
    for (std::size_t i = 0; i < failed.size() && i < kShown; ++i) {
        std::printf("               %s: %s\n", failed[i]->name.c_str(),
                    api::downloadStateText(*failed[i]).c_str());
    }
    if (failed.size() > kShown) {
        std::printf("               and %zu more failed (`nicer status --json` lists them)\n",
                    failed.size() - kShown);
    }
}

/// The volunteer's rules: which holds the work, and what they read (each line only where there is something
/// to say).
void printRules(const api::DaemonState& s) {
    if (!s.holdReason.empty()) {
        std::printf("  held         %s\n", s.holdReason.c_str());
    }
    if (s.temperature != api::kNoTemperature) {
        std::printf("  temperature  %.0f °C, target %.0f °C (%s)\n", s.temperature, s.temperatureTargetInUse,
                    s.temperatureSensor.c_str());
    }
    if (!s.sensorNote.empty()) {
        std::printf("  note         %s\n", s.sensorNote.c_str());
    }
    if (s.fanSpeed >= 0.0) {
        const double target = control::profileFor(s.params, s.presence).fanTarget;
        std::printf("  fans         %.0f rpm%s\n", s.fanSpeed,
                    target > 0.0 ? (", target " + text::shortNumber(target) + " rpm").c_str()
                                 : ", no target");
    }
    if (!s.powerSource.empty()) {
        std::printf("  power        %s%s%s (%s)\n", s.onBattery ? "on battery" : "on mains",
                    s.batteryPercent >= 0.0 ? (", " + text::shortNumber(s.batteryPercent) + "%").c_str() : "",
                    s.powerSaver ? ", power-saver profile" : "", s.powerSource.c_str());
    }
    if (!s.powerNote.empty()) {
        std::printf("  note         %s\n", s.powerNote.c_str());
    }
    if (s.params.keepAwake != 0) {
        std::printf("  sleep        %s\n", s.sleepNote.c_str());
    }
    if (s.games > 0) {
        std::printf("  games        %u running with GameMode\n", s.games);
    }
    if (!s.params.computeHours.always() || !s.params.transferHours.always()) {
        std::printf("  schedule     computing hours %s, transfer hours %s\n",
                    s.params.computeHours.text().c_str(), s.params.transferHours.text().c_str());
    }
    if (!s.exclusivePrograms.empty()) {
        std::string names;
        for (const auto& name : s.exclusivePrograms) {
            const bool runs = std::find(s.programsRunning.begin(), s.programsRunning.end(), name) !=
                              s.programsRunning.end();
            names += (names.empty() ? "" : ", ") + name + (runs ? " (running)" : "");
        }
        std::printf("  programs     the work pauses while these run: %s\n", names.c_str());
    }
    // The profile in force and why (its settings are among the parameters above).
    if (s.presence == control::Presence::Unknown) {
        std::printf("  you          not known, so the profile for while you're here holds: %s\n",
                    s.presenceReason.c_str());
    } else {
        std::printf("  you          %s: %s (%s), so the profile %s holds\n",
                    s.presence == control::Presence::Here ? "here" : "away", s.presenceReason.c_str(),
                    s.presenceSource.c_str(), control::profileText(s.presence).c_str());
    }
    if (!s.inputTimeNote.empty()) {
        std::printf("  input time   %s\n", s.inputTimeNote.c_str());
    }
}

/// The memory rule: what it read beside the work, and how it holds the work ("memory rule" line), or why
/// there is none.
void printMemoryRule(const api::DaemonState& s) {
    if (s.params.memoryStall <= 0.0) {
        std::printf("  memory rule  off (memory-stall 0)\n");
        return;
    }
    if (s.memoryStallBeside < 0.0) {
        std::printf("  memory rule  reads nothing: %s\n", s.memoryNote.c_str());
        return;
    }
    std::string reading = "programs beside the work waited on memory " +
                          text::shortNumber(std::round(s.memoryStallBeside * 1000.0) / 10.0) +
                          "% of the last period (" + text::shortNumber(s.params.memoryStall * 100.0) +
                          "% allowed)";
    if (s.memoryStallBeside > 0.0 && !s.memoryStallWhere.empty()) {
        reading += ", most in " + s.memoryStallWhere;
    }
    if (s.workMemory > 0) {
        reading += "; the work holds " + text::humanBytes(static_cast<double>(s.workMemory)) +
                   (s.workCanSwap ? "" : ", no swap to take it");
    }
    std::printf("  memory rule  %s\n", reading.c_str());
    if (!s.memoryHoldReason.empty()) {
        std::printf("               %s: %s\n", s.memoryHold.c_str(), s.memoryHoldReason.c_str());
    }
    if (!s.memoryNote.empty()) {
        std::printf("  note         %s\n", s.memoryNote.c_str());
    }
}

void printStatus(const api::DaemonState& s) {
    const auto pct = [](double v) { return 100.0 * v; };
    const bool heldByRule = s.quota <= 0.0 && !s.holdReason.empty();
    const auto now = std::chrono::system_clock::now();
    const std::string pausedText =
        s.pausedUntilUSec == 0
            ? "paused until you resume it"
            : "paused " + wallclock::untilText(
                              wallclock::TimePoint(std::chrono::microseconds(s.pausedUntilUSec)), now);
    std::printf("nicerd: %s, %s\n",
                s.paused      ? pausedText.c_str()
                : heldByRule  ? "paused by a rule"
                : s.quota > 0 ? (s.holdReason.empty() ? "running" : "running, held by a rule")
                              : "work stopped (no spare CPU)",
                s.lastError.empty() ? "no errors" : ("last error: " + s.lastError).c_str());
    printRules(s);
    std::string command;
    for (const auto& arg : s.workload) {
        command += (command.empty() ? "" : " ") + arg;
    }
    // The instances the profile in force freezes (max-instances), where it does.
    const int limit = control::profileFor(s.params, s.presence).maxInstances;
    const std::string frozen = limit > 0 && static_cast<std::uint32_t>(limit) < s.instances
                                   ? " (" + std::to_string(s.instancesRunning) + " running " +
                                         control::profileText(s.presence) + ", the others frozen)"
                                   : std::string();
    std::printf("  workload     %s: %s%s, %u instance%s%s\n", s.workloadPreset.c_str(), command.c_str(),
                s.demoWorkload ? " (burns CPU, does no science)" : "", s.instances,
                s.instances == 1 ? "" : "s", frozen.c_str());
    std::printf("  placement    %s: %s\n", std::string(api::placementName(s.placement)).c_str(),
                std::string(api::placementSummary(s.placement)).c_str());
    if (!s.placementNote.empty()) {
        std::printf("               %s\n", s.placementNote.c_str());
    }
    std::printf("  actuator     %s\n", std::string(api::busKeyword(s.actuator)).c_str());
    if (!s.actuatorNote.empty()) {
        std::printf("  note         %s\n", s.actuatorNote.c_str());
    }
    // The fence (memory-max), and above what the kernel reclaims the work's pages first: the profile's
    // memory share.
    const std::string reclaimed = s.memoryHigh > 0 ? "; reclaimed first above " +
                                                         text::humanBytes(static_cast<double>(s.memoryHigh)) +
                                                         " " + control::profileText(s.presence)
                                                   : std::string();
    if (s.memoryMaxPercent >= 100.0) {
        std::printf("  memory max   none: the work may use all the memory%s\n", reclaimed.c_str());
    } else if (s.memoryMax > 0) {
        std::printf("  memory max   %g%% (%s%s)\n", s.memoryMaxPercent,
                    text::humanBytes(static_cast<double>(s.memoryMax)).c_str(), reclaimed.c_str());
    } else {
        std::printf("  memory max   %g%%, not in force (see the note)\n", s.memoryMaxPercent);
    }
    printMemoryRule(s);
    if (s.outside >= 0.0) {
        std::printf("  machine      %u CPUs: %.1f%% your programs, %.1f%% other users and services, %.1f%% "
                    "volunteer work, %.1f%% idle\n",
                    s.cpuCount, pct(api::yourPrograms(s.foreground, s.outside)), pct(s.outside),
                    pct(s.background), pct(s.idle));
    } else {
        std::printf("  machine      %u CPUs: %.1f%% yours, %.1f%% volunteer work, %.1f%% idle\n", s.cpuCount,
                    pct(s.foreground), pct(s.background), pct(s.idle));
    }
    const char* answered =
        s.signal != control::Signal::Outside ? "machine: the quota answers the idle time of the whole machine"
        : s.placement == api::Placement::RootSlice
            ? "outside: cpu.idle at the root keeps the work behind every program, so the quota answers "
              "no demand and stays whole"
            : "outside: the quota answers other users and services; cpu.idle keeps the work behind your "
              "programs";
    std::printf("  signal       %s (setting %s)\n", answered,
                std::string(control::signalName(s.signalSetting)).c_str());
    std::printf("  quota        %.1f%% of the machine\n", pct(s.quota));
    std::printf("  reserve      %.1f%% idle kept (band %.3g x multiplier %g), overload count %u\n",
                pct(control::reserveKept(s.params.reserveBand, s.multiplier,
                                         s.signal == control::Signal::Outside, s.quota)),
                s.params.reserveBand, s.multiplier, s.overloadCount);
    std::printf("  parameters  ");
    for (const auto& [key, value] : control::parametersAsText(s.params)) {
        std::printf(" %s=%s", key.c_str(), value.c_str());
    }
    std::printf("\n");
    if (!s.downloads.empty()) {
        printDownloads(s);
    }
    printBoincSummary(s.boinc);
}

/// Why a choice cannot run, from this client's own list of presets (nicerd says only whether it can).
std::string unavailableReason(const std::string& id) {
    if (id == workload::kCustomPreset) {
        return workload::customUnavailableMessage();
    }
    if (const auto* preset = workload::findPreset(id)) {
        return "not installed: " + workload::installAdvice(*preset);
    }
    return "not available in nicerd";
}

void printPresets(const api::DaemonState& s) {
    std::printf("Workloads (* = running; choose one with `nicer workload ID`):\n");
    for (const auto& preset : s.workloadPresets) {
        std::printf("%c %-9s %s%s\n", preset.id == s.workloadPreset ? '*' : ' ', preset.id.c_str(),
                    preset.name.c_str(),
                    preset.available ? "" : (" -- " + unavailableReason(preset.id)).c_str());
        std::printf("            %s\n", preset.description.c_str());
    }
}

} // namespace

int runDaemonCommand(DaemonCommand command, const DaemonCommandOptions& o) {
    // Read before nicerd is asked, as the other arguments are.
    const auto end = pauseEnd(o, std::chrono::system_clock::now());
    if (!end) {
        std::cerr << "nicer pause: " << end.error().message << '\n';
        return kExitBadInput;
    }
    std::vector<std::pair<std::string, std::string>> assignments;
    for (const auto& a : o.assignments) {
        const auto eq = a.find('=');
        if (eq == std::string::npos || eq == 0) {
            std::cerr << "nicer set: '" << a << "' is not KEY=VALUE (for example reserve-band=0.05)\n";
            return kExitBadInput;
        }
        assignments.emplace_back(a.substr(0, eq), a.substr(eq + 1));
    }
    if (command == DaemonCommand::Workload && !o.workloadPreset.empty() &&
        !workload::WorkloadChooser::known(o.workloadPreset)) {
        std::cerr << "nicer workload: unknown workload preset '" << o.workloadPreset << "': choose "
                  << workload::presetIdList() << '\n';
        return kExitBadInput;
    }
    auto client = dbus::DaemonClient::connect();
    if (!client) {
        std::cerr << "nicer: " << client.error().message << '\n';
        return kExitFailure;
    }
    if (command == DaemonCommand::Status) {
        auto status = client->status();
        if (!status) {
            std::cerr << "nicer status: " << status.error().message << '\n';
            return kExitFailure;
        }
        if (o.json) {
            std::cout << statusJson(*status).dump(2) << '\n';
        } else {
            printStatus(*status);
        }
        return kExitOk;
    }
    if (command == DaemonCommand::Set) {
        auto status = client->status();
        if (!status) {
            std::cerr << "nicer set: " << status.error().message << '\n';
            return kExitFailure;
        }
        // The new values over the daemon's current ones, parsed and checked here with the same rules as the
        // files: a bad value is bad input (2), a daemon that cannot be reached or refuses is a failure (1).
        control::ControllerParams params = status->params;
        for (const auto& [key, value] : assignments) {
            if (auto parsed = control::setParameterFromText(params, key, value); !parsed) {
                std::cerr << "nicer set: " << parsed.error().message << '\n';
                return kExitBadInput;
            }
        }
        if (auto valid = control::validate(params); !valid) {
            std::cerr << "nicer set: " << valid.error().message << '\n';
            return kExitBadInput;
        }
        if (auto set = client->setParameters(params); !set) {
            std::cerr << "nicer set: " << set.error().message << '\n';
            return kExitFailure;
        }
        return kExitOk;
    }
    if (command == DaemonCommand::Workload) {
        if (o.workloadPreset.empty()) {
            auto status = client->status();
            if (!status) {
                std::cerr << "nicer workload: " << status.error().message << '\n';
                return kExitFailure;
            }
            printPresets(*status);
            return kExitOk;
        }
        if (auto set = client->setWorkloadPreset(o.workloadPreset); !set) {
            std::cerr << "nicer workload: " << set.error().message << '\n';
            return kExitFailure;
        }
        return kExitOk;
    }
    const bool pause = command == DaemonCommand::Pause;
    auto done = pause ? client->pause(*end) : client->resume();
    if (!done) {
        std::cerr << "nicer " << (pause ? "pause" : "resume") << ": " << done.error().message << '\n';
        return kExitFailure;
    }
    return kExitOk;
}

} // namespace nicer::cli
