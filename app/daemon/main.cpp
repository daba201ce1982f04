// nicerd: the nicer daemon. Parses options and the config file, then hands over to nicer::daemon::Daemon.
#include "control/ControllerParams.h"
#include "control/ParameterText.h"
#include "daemon/Daemon.h"
#include "daemon/DaemonConfig.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <unistd.h>

int main(int argc, char** argv) {
    using namespace nicer;

    CLI::App app{
        "nicerd: runs volunteer work in a systemd user slice, capped to the CPU your programs leave idle"};
    app.set_version_flag("--version", NICER_VERSION);
    app.footer(
        "Options can also be set in the config file, as `key = value` lines with the long option names\n"
        "(for example `reserve-band = 0.05` or `workload = [\"boinc\", \"--dir\", \"/var/lib/boinc\"]`).\n"
        "Without a workload, nicerd runs a labelled demo: `md5sum /dev/zero` on every CPU.");

    const auto configPath = daemon::defaultConfigFile();
    app.set_config("--config", configPath.string(), "Config file (read when it exists)");
    app.allow_config_extras(CLI::config_extras_mode::error);

    daemon::DaemonConfig config;
    auto& p = config.params;
    double periodSeconds = std::chrono::duration<double>(p.period).count();
    int instances = 0;
    std::vector<std::string> workload;
    std::string parameterFile = daemon::defaultParameterFile().string();

    app.add_option("--reserve-band", p.reserveBand, "Idle share of the machine kept in reserve, (0, 0.5]")
        ->capture_default_str();
    app.add_option("--min-multiplier", p.minMultiplier, "Smallest reserve-band multiplier, 1..64")
        ->capture_default_str();
    app.add_option("--max-multiplier", p.maxMultiplier, "Largest reserve-band multiplier, 1..64")
        ->capture_default_str();
    app.add_option("--overload-threshold", p.overloadThreshold, "No-idle periods before the work is stopped")
        ->capture_default_str();
    app.add_option("--idle-epsilon", p.idleEpsilon, "Idle at or below this counts as none, [0, 0.5)")
        ->capture_default_str();
    app.add_option("--period", periodSeconds, "Seconds between two steps of the loop, 0.01..10")
        ->capture_default_str();
    app.add_option("--instances", instances, "Copies of the workload to run (default: one per CPU)")
        ->check(CLI::Range(1, 1024));
    app.add_option("--actuator", config.actuator, "How the work is capped")
        ->check(CLI::IsMember({"auto", "systemd-slice", "signal-duty-cycle"}))
        ->capture_default_str();
    app.add_option("--slice", config.slice, "The systemd user slice of the work")->capture_default_str();
    app.add_option("--adopt", config.adopt, "PIDs of running processes of yours to bring under control too");
    app.add_option("--parameter-file", parameterFile, "Where parameters set at run time are kept")
        ->capture_default_str();
    app.add_option("--proc-stat", config.procStat, "Where to read the CPU counters")->capture_default_str();
    app.add_option("workload", workload, "The volunteer work's command and arguments, after --");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (app.exit(e) == 0) {
            return 0;
        }
        if (std::filesystem::exists(app["--config"]->as<std::string>())) {
            std::cerr << "nicerd: check " << app["--config"]->as<std::string>() << " and the command line\n";
        }
        return 2;
    }

    auto period = control::periodFromSeconds(periodSeconds);
    if (!period) {
        std::cerr << "nicerd: " << period.error().message << '\n';
        return 2;
    }
    p.period = *period;
    if (auto valid = control::validate(p); !valid) {
        std::cerr << "nicerd: " << valid.error().message << '\n';
        return 2;
    }
    const int cpus = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
    if (workload.empty()) {
        config.workload = workload::demoWorkload(instances > 0 ? instances : cpus);
    } else {
        config.workload = workload::WorkloadSpec{workload, instances > 0 ? instances : cpus, false};
    }
    config.parameterFile = parameterFile;

    auto daemon = daemon::Daemon::create(std::move(config));
    if (!daemon) {
        std::cerr << "nicerd: " << daemon.error().message << '\n';
        return 1;
    }
    std::cerr << "nicerd: running " << ((*daemon)->workload().demo ? "the demo workload" : "the workload")
              << " (" << (*daemon)->workload().instances << " instances) with the "
              << (*daemon)->actuatorName() << " actuator\n";
    return (*daemon)->run();
}
