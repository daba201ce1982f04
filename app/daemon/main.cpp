// nicerd: the nicer daemon. Parses options and the config file, then hands over to nicer::daemon::Daemon.
#include "api/Actuator.h"
#include "api/DownloadText.h"
#include "api/MemoryLimit.h"
#include "api/Placement.h"
#include "control/ControllerParams.h"
#include "control/ParameterTable.h"
#include "daemon/Daemon.h"
#include "daemon/DaemonConfig.h"
#include "daemon/ManifestSources.h"
#include "daemon/SettingPrecedence.h"
#include "dbus/service/DaemonService.h"
#include "libsystemd/ExitSignals.h"
#include "net/rate/RateLimiter.h"
#include "options/ControllerOptions.h"
#include "util/Keywords.h"
#include "util/Log.h"
#include "util/Text.h"
#include "workload/WorkloadChooser.h"

#include <CLI/CLI.hpp>

#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace {

using namespace nicer;

/// What the command line and the config file set: the daemon's configuration, and the values that become part
/// of it only once they are checked (configFrom).
struct Settings {
    daemon::DaemonConfig config;
    int instances = 0; ///< 0: one per CPU
    std::string parameterFile = daemon::defaultParameterFile().string();
    std::string workloadFile = daemon::defaultWorkloadFile().string();
    std::string programListFile = daemon::defaultProgramListFile().string();
    std::string pauseFile = daemon::defaultPauseFile().string();
    std::vector<std::string> manifests;
    std::string downloadDir;
    std::string maxRate;
    std::string caFile;
    int retrySeconds = static_cast<int>(daemon::DownloadSettings{}.retryDelay.count());
};

/// The controller's parameters, from their table (--reserve-band and so on, the period in seconds), and what
/// it answers (--signal).
void addControllerOptions(CLI::App& app, Settings& s) {
    options::addParameterOptions(app, s.config.params);
    options::addSignalOption(
        app, s.config.signal,
        "What the controller answers: machine (the thesis: the idle time of the whole machine), outside "
        "(only the demand from outside the user manager: system services, containers, other users; your "
        "programs beside the work are left to the kernel's idle weight, so they cost the work no quota), "
        "or auto (outside where the work's slice has cpu.idle 1, else machine)");
}

/// What runs: the workload and its copies, and processes to adopt.
void addWorkloadOptions(CLI::App& app, Settings& s) {
    app.add_option("--instances", s.instances,
                   "Copies of a command or of the demo to run (default: one per CPU); the BOINC and "
                   "Folding@home clients run once and use every CPU themselves")
        ->check(CLI::Range(1, 1024));
    app.add_option("--workload-preset", s.config.workloadPreset,
                   "Run a preset: demo, boinc, folding, or custom (the command after --)");
    app.add_option("--adopt", s.config.adopt,
                   "PIDs of running processes of yours to bring under control too");
    app.add_option("workload", s.config.command, "The volunteer work's command and arguments, after --");
}

/// An option whose value is "auto" (nullopt: nicerd chooses) or a keyword of @p keywords, the enum's table.
template <typename Enum, std::size_t N>
CLI::Option* addChoiceOption(CLI::App& app, const std::string& name, std::optional<Enum>& choice,
                             const std::array<std::string_view, N>& keywords, const std::string& help) {
    std::vector<std::string> values{"auto"};
    values.insert(values.end(), keywords.begin(), keywords.end());
    // The check lets through only auto and the keywords: auto, the one value outside the table, reads as
    // nullopt.
    return app
        .add_option_function<std::string>(
            name, [&choice, &keywords](const std::string& text) { choice = valueIn<Enum>(keywords, text); },
            help)
        ->check(CLI::IsMember(values))
        ->default_str("auto");
}

/// Where the work runs and how it is held: the placement, the actuator, the slice's weight, window and
/// memory.
void addSliceOptions(CLI::App& app, Settings& s) {
    addChoiceOption(
        app, "--placement", s.config.placement, api::kPlacementKeywords,
        "Where the work runs: auto (the root idle slice, the system's nicer.slice, where nicer's .deb "
        "installed it and your user manager brought your socket, /run/nicer/work/UID.socket, which "
        "starts your nicer-work@UID.service; else your user manager's slice), root-slice (or fail, "
        "saying why) or user-slice. In the root idle slice the kernel makes the work yield at once to "
        "every program on the machine; in the user slice only to what runs inside your user manager. "
        "Setuid helpers (VirtualBox's, for some BOINC apps) run only in the user slice");
    addChoiceOption(app, "--actuator", s.config.actuator, api::kActuatorKeywords,
                    "How the work is capped: auto (the slice's CPU quota where the cpu controller is "
                    "delegated, else a duty cycle), systemd-slice, freezer-duty-cycle (cgroup.freeze, cgroup "
                    "v2) or signal-duty-cycle (SIGSTOP/SIGCONT)");
    app.add_option("--slice", s.config.slice, "The systemd user slice of the work")->capture_default_str();
    app.add_flag(
        "--idle-weight,!--no-idle-weight", s.config.sliceOptions.idleWeight,
        "The work's slice also gets CPUWeight=idle (cpu.idle on cgroup v2, the smallest cpu.shares on "
        "v1), so it loses every contention with your programs (on by default; --no-idle-weight keeps "
        "the default weight and only the quota holds the work back, as in the thesis)");
    app.add_option_function<std::string>(
           "--quota-period",
           [&s](const std::string& text) {
               if (text == "auto") {
                   s.config.sliceOptions.quotaPeriod.reset();
                   return;
               }
               double seconds = 0.0;
               if (!text::parseNumber(text, seconds) || !(seconds >= 0.001 && seconds <= 1.0)) {
                   throw CLI::ValidationError("--quota-period",
                                              "must be 'auto' or between 0.001 and 1 (seconds), as the "
                                              "kernel takes; got '" +
                                                  text + "'");
               }
               s.config.sliceOptions.quotaPeriod = std::chrono::microseconds(std::llround(seconds * 1e6));
           },
           "The kernel's CPU bandwidth window of the work's slice, in seconds: the quota is enforced over "
           "windows this long, and nicerd changes it at their start (the kernel refills the budget at every "
           "change). Longer windows throttle the work less often, which delays your programs' wake-ups less. "
           "auto: the period, or a whole fraction of it of at most 1 s")
        ->default_str("auto");
    app.add_option_function<std::string>(
           "--memory-max",
           [&s](const std::string& text) {
               auto percent = daemon::parseMemoryMaxPercent(text);
               if (!percent) {
                   throw CLI::ValidationError("--memory-max", percent.error().message);
               }
               s.config.memoryMaxPercent = *percent;
           },
           "The most memory the work may use, in percent of the machine's (as BOINC's \"use at most N% of "
           "memory\"), from 10 to 100, or none (100). The work's slice gets MemoryMax at that and MemoryHigh "
           "at " +
               text::shortNumber(100.0 * api::kMemoryHighShare) +
               "% of it, so under memory pressure the work is reclaimed, and in the end OOM-killed in its "
               "slice, rather than your programs (by the kernel or systemd-oomd)")
        ->default_str("50");
}

/// The files nicerd keeps, and the kernel's files it reads (tests point them elsewhere).
void addFileOptions(CLI::App& app, Settings& s) {
    app.add_option("--parameter-file", s.parameterFile, "Where parameters set at run time are kept")
        ->capture_default_str();
    app.add_option("--workload-file", s.workloadFile, "Where the workload chosen at run time is kept")
        ->capture_default_str();
    app.add_option("--exclusive-programs-file", s.programListFile,
                   "Where the named programs set at run time (nicer exclusive-programs) are kept")
        ->capture_default_str();
    app.add_option("--pause-file", s.pauseFile,
                   "Present while you pause the work (nicer pause), so that the pause holds when nicerd "
                   "restarts: after an upgrade of nicer or a reboot, nicerd starts with the work paused")
        ->capture_default_str();
    app.add_option("--proc-stat", s.config.procStat, "Where to read the CPU counters")->capture_default_str();
    app.add_option("--proc-meminfo", s.config.procMeminfo,
                   "Where to read the machine's memory size (MemTotal)")
        ->capture_default_str();
}

/// The work units to download, and how.
void addDownloadOptions(CLI::App& app, Settings& s) {
    app.add_option("--manifest", s.manifests,
                   "Work units to download: a Metalink 4 file, or the http(s) URL of a single file "
                   "(unverified: no hash). Repeat it for several");
    app.add_option("--download-dir", s.downloadDir,
                   "Where downloads go (default: the workload preset's directory, e.g. "
                   "$XDG_DATA_HOME/nicer/boinc, else $XDG_DATA_HOME/nicer/downloads)");
    app.add_option("--max-rate", s.maxRate,
                   "Cap on the download rate in bytes/s, e.g. 500k, 10M (1024-based)");
    app.add_flag("--nice,!--no-nice", s.config.downloads.nice,
                 "Downloads yield the link to your own traffic (on by default; --no-nice or nice = false "
                 "turns it off)");
    app.add_option("--streams", s.config.downloads.streams,
                   "Concurrent HTTP/2 streams of the downloads, at most")
        ->check(CLI::Range(std::size_t{1}, std::size_t{256}))
        ->capture_default_str();
    app.add_option("--ca-file", s.caFile, "Extra CA certificates (PEM) to trust for https download servers")
        ->check(CLI::ExistingFile);
    app.add_option("--download-retry", s.retrySeconds, "Seconds before files that failed are tried again")
        ->check(CLI::Range(1, 7 * 24 * 3600))
        ->capture_default_str();
}

/// Where the volunteer's rules read the machine (their parameters are the controller's, above), and the named
/// programs.
void addRuleOptions(CLI::App& app, Settings& s) {
    app.add_option("--exclusive-program", s.config.exclusivePrograms,
                   "A program that pauses the work while it runs, by its name (as BOINC's exclusive "
                   "applications: blender, a game's executable); repeat it for several. The work resumes "
                   "resume-delay seconds after the last one ended. Set at run time with nicer "
                   "exclusive-programs or the tray; given here, the list holds for this run over that one");
    app.add_option(
        "--temperature-sensor", s.config.temperatureSensor,
        "The temperature sensor the temperature rule reads: an hwmon temp*_input file or a thermal "
        "zone (default: the CPU's, found in --hwmon-dir and --thermal-dir)");
    app.add_option("--hwmon-dir", s.config.hwmonDir,
                   "Where the CPU's temperature sensor and the fans are looked for")
        ->capture_default_str();
    app.add_option("--thermal-dir", s.config.thermalDir,
                   "Where the thermal zones are looked for when no hwmon device is a CPU's")
        ->capture_default_str();
    app.add_option("--power-supply-dir", s.config.powerSupplyDir,
                   "Where the battery and the mains are read when UPower is not on the system bus")
        ->capture_default_str();
    app.add_option("--proc-dir", s.config.procDir, "Where the named programs are looked for")
        ->capture_default_str();
    app.add_option("--input-time-object", s.config.inputTimeObject,
                   "The POSIX shared-memory object publish-input-time writes, where BOINC reads it")
        ->capture_default_str()
        ->check([](const std::string& name) {
            return name.size() > 1 && name[0] == '/' && name.find('/', 1) == std::string::npos
                       ? std::string()
                       : "a shared-memory object's name is one '/' and a name, e.g. /idle_detect_shmem";
        });
}

/// Every option of nicerd, its help and its config file, into @p s.
void addOptions(CLI::App& app, Settings& s) {
    app.set_version_flag("--version", NICER_VERSION);
    app.footer(
        "Options can also be set in the config file, as `key = value` lines with the long option names\n"
        "(for example `reserve-band = 0.05` or `workload = [\"boinc\", \"--dir\", \"/var/lib/boinc\"]`).\n"
        "Which value holds, for the controller's parameters and the workload alike: the command line, then\n"
        "what was set at run time (`nicer set`, `nicer workload ID`, the tray; kept in --parameter-file and\n"
        "--workload-file, so it survives restarts), then the config file, then the defaults. A flag on the\n"
        "command line holds for that run only (nicerd's log says which value it holds over); a change at "
        "run\n"
        "time still applies and is kept.\n"
        "The workload: a command (after --, or `workload` in the config file) or --workload-preset; with\n"
        "none of them and nothing chosen at run time, a labelled demo, `md5sum /dev/zero` on every CPU.\n"
        "Presets: demo, boinc (BOINC client), folding (Folding@home v7 client), custom (the command given\n"
        "to nicerd).\n"
        "Downloads: every --manifest (a Metalink 4 file, or the http(s) URL of one file) is fetched over\n"
        "HTTP/2 into --download-dir, verified and resumable, yielding the link to your own traffic unless\n"
        "--no-nice; files that fail are tried again after --download-retry seconds.\n"
        "The volunteer's rules hold the work under the controller's quota, or pause it: the CPU's\n"
        "temperature (temperature-target; 0 picks 80 degrees C, lower where the sensor's own limits are),\n"
        "the fans (fan-target), the battery (paused, or battery-cap above battery-min-charge),\n"
        "power-profiles-daemon's power-saver profile, games run with GameMode, and --exclusive-program.\n"
        "A rule that paused the work gives it back resume-delay seconds after its cause ended. The power\n"
        "comes from UPower on the system bus (DBUS_SYSTEM_BUS_ADDRESS, else the system's), the games from\n"
        "GameMode on the session bus; without them nicerd says so (nicer status) and reads\n"
        "--power-supply-dir, or sees no games.");
    app.set_config("--config", daemon::defaultConfigFile().string(), "Config file (read when it exists)");
    app.allow_config_extras(CLI::config_extras_mode::error);
    addControllerOptions(app, s);
    addWorkloadOptions(app, s);
    addSliceOptions(app, s);
    addFileOptions(app, s);
    addDownloadOptions(app, s);
    addRuleOptions(app, s);
}

/// A config file that reads as empty.
class NoConfigFile : public CLI::ConfigTOML {
public:
    std::vector<CLI::ConfigItem> from_config(std::istream& /*input*/) const override { return {}; }
};

/// Which of the settings that the precedence rule orders the command line gave itself. CLI11 merges the
/// command line with the config file, so the command line is parsed alone first, by a copy of the options
/// whose config file reads as empty. Its errors and --help are left to the real parse.
daemon::CommandLineSettings givenOnCommandLine(int argc, char** argv) {
    CLI::App app;
    Settings ignored;
    addOptions(app, ignored);
    app.config_formatter(std::make_shared<NoConfigFile>());
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError&) {
        return {};
    }
    daemon::CommandLineSettings given;
    for (const auto& info : control::parameterTable()) {
        if (app.count(std::string("--") + info.key) > 0) {
            given.parameters.emplace_back(info.key);
        }
    }
    given.workload = app.count("--workload-preset") > 0 || app.count("workload") > 0;
    given.exclusivePrograms = app.count("--exclusive-program") > 0;
    return given;
}

/// Parses the command line and the config file; the exit status when nicerd is to end here (--help,
/// --version, bad input), nothing when it is to start.
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (app.exit(e) == 0) {
            return 0;
        }
        if (std::filesystem::exists(app["--config"]->as<std::string>())) {
            log::error() << "nicerd: check " << app["--config"]->as<std::string>() << " and the command line";
        }
        return 2;
    }
    return std::nullopt;
}

/// The daemon's configuration from @p s: the parameters checked, the manifests read, the rate parsed. An
/// error is bad input and says what to fix.
Result<daemon::DaemonConfig> configFrom(Settings s) {
    if (auto valid = control::validate(s.config.params); !valid) {
        return valid.error();
    }
    if (auto checked = workload::checkExplicitWorkload(s.config.workloadPreset, !s.config.command.empty());
        !checked) {
        return checked.error();
    }
    if (!s.manifests.empty()) {
        auto files = daemon::readDownloadSources(s.manifests);
        if (!files) {
            return files.error();
        }
        s.config.downloads.files = std::move(*files);
    }
    if (!s.maxRate.empty()) {
        auto rate = net::parseByteRate(s.maxRate);
        if (!rate) {
            return Error{"max-rate = '" + s.maxRate + "': " + rate.error().message};
        }
        s.config.downloads.maxRate = *rate;
    }
    s.config.downloads.dir = s.downloadDir;
    if (!s.caFile.empty()) {
        s.config.downloads.caFile = s.caFile;
    }
    s.config.downloads.retryDelay = std::chrono::seconds(s.retrySeconds);
    const int cpus = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
    s.config.instances = s.instances > 0 ? s.instances : cpus;
    s.config.parameterFile = s.parameterFile;
    s.config.workloadFile = s.workloadFile;
    s.config.programListFile = s.programListFile;
    s.config.pauseFile = s.pauseFile;
    s.config.dataDir = daemon::defaultDataDir();
    if (const char* path = std::getenv("PATH"); path && *path) {
        s.config.pathVariable = path;
    }
    return std::move(s.config);
}

/// The composition root: the daemon reports to its D-Bus service, which it publishes at the right step.
Result<std::unique_ptr<daemon::DaemonObserver>> publishService(sd_bus* bus, daemon::DaemonControl& control) {
    auto service = dbus::DaemonService::publish(bus, control);
    if (!service) {
        return service.error();
    }
    return std::unique_ptr<daemon::DaemonObserver>(std::move(*service));
}

/// What runs, with which actuator, and what is downloaded, in nicerd's log.
void logStart(daemon::Daemon& d) {
    const auto s = d.state();
    log::info() << "nicerd: running " << (s.demoWorkload ? "the demo workload" : "the workload") << " '"
                << s.workloadPreset << "' (" << s.instances << " instances) with the "
                << api::busKeyword(s.actuator) << " actuator";
    if (!s.downloads.empty()) {
        log::info() << "nicerd: downloading " << s.downloads.size()
                    << (s.downloads.size() == 1 ? " file" : " files") << " into " << d.downloadDir().string()
                    << " (bandwidth: " << api::bandwidthModeText(api::bandwidthOf(s)) << ")";
    }
}

int run(int argc, char** argv) {
    CLI::App app{
        "nicerd: runs volunteer work in a systemd user slice, capped to the CPU your programs leave idle"};
    Settings settings;
    addOptions(app, settings);
    if (const auto status = parse(app, argc, argv)) {
        return *status;
    }
    auto config = configFrom(std::move(settings));
    if (!config) {
        log::error() << "nicerd: " << config.error().message;
        return 2;
    }
    // What was set at run time, where the rule puts it. A saved file that stops the start is nicerd's own
    // state, not bad input.
    auto notes = daemon::applySavedSettings(*config, givenOnCommandLine(argc, argv));
    if (!notes) {
        log::error() << "nicerd: " << notes.error().message;
        return 1;
    }
    for (const auto& note : *notes) {
        log::notice() << "nicerd: " << note;
    }
    // systemd stops nicerd with SIGTERM, a terminal with SIGINT: blocked before the work starts, so that one
    // that comes meanwhile waits for the loop, which then ends and stops the work in order.
    const auto stopSignals = {SIGTERM, SIGINT};
    libsystemd::blockSignals(stopSignals);
    auto daemon = daemon::Daemon::create(std::move(*config), publishService);
    if (!daemon) {
        log::error() << "nicerd: " << daemon.error().message;
        return 1;
    }
    auto watched = libsystemd::exitOnSignals((*daemon)->event(), stopSignals);
    if (!watched) {
        log::error() << "nicerd: " << watched.error().message;
        return 1;
    }
    logStart(**daemon);
    return (*daemon)->run();
}

} // namespace

int main(int argc, char** argv) {
    // Errors are values inside; what escapes (out of memory, a bug) still ends with a message, not abort(),
    // and the work, bound to nicerd's unit, stops with it.
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        log::error() << "nicerd: internal error: " << e.what();
    } catch (...) {
        log::error() << "nicerd: internal error";
    }
    return EXIT_FAILURE;
}
