// nicer's whole command line in one place: every command's options (CLI11), parsed, and the command that was
// given run. The commands themselves (the *Command.cpp files) take plain option structs, so CLI11, a
// header-only library that costs about 20 s of a core to compile and 40 s to lint per file, is compiled once
// here (and once in app/options, the controller's options that nicerd shares).
#include "CommandLine.h"

#include "BoincCommands.h"
#include "DaemonCommands.h"
#include "ExitCode.h"
#include "FetchCommand.h"
#include "HistoryCommand.h"
#include "ProgramsCommand.h"
#include "SampleCommand.h"
#include "SimulateCommand.h"
#include "control/ParameterTable.h"
#include "options/ControllerOptions.h"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace nicer::cli {

namespace {

// The same range as the controller's period.
const control::ParameterInfo& periodInfo() {
    return *control::findParameter("period");
}

/// `nicer status`, `pause`, `resume`, `set` and `workload`; @p given becomes the one on the command line.
void addDaemonCommands(CLI::App& parent, DaemonCommandOptions& o, std::optional<DaemonCommand>& given) {
    const auto command = [&](const char* name, const std::string& help, DaemonCommand which) {
        auto* cmd = parent.add_subcommand(name, help);
        cmd->callback([&given, which] { given = which; });
        return cmd;
    };
    command("status", "Show what nicerd is doing", DaemonCommand::Status)
        ->add_flag("--json", o.json, "Print JSON");
    auto* pause = command("pause",
                          "Freeze the volunteer work until `nicer resume`, or for a while (a snooze); kept "
                          "across restarts of nicerd",
                          DaemonCommand::Pause);
    auto* pauseFor =
        pause->add_option("--for", o.pauseFor, "Resume after this long: 90s, 15m, 1h, 1h30m, 2d");
    pause
        ->add_option("--until", o.pauseUntil,
                     "Resume at this local time: 18:00, tomorrow (for the rest of today), 'tomorrow 08:00', "
                     "'2026-12-24 18:00'")
        ->excludes(pauseFor);
    command("resume", "Let the controller run the volunteer work again", DaemonCommand::Resume);
    command("set", "Change controller parameters (kept across restarts)", DaemonCommand::Set)
        ->add_option("assignments", o.assignments,
                     "KEY=VALUE: " + control::parameterNameList() + " (period in seconds)")
        ->required();
    command("workload", "List the workloads nicerd can run, or switch to one (kept across restarts)",
            DaemonCommand::Workload)
        ->add_option("preset", o.workloadPreset,
                     "demo, boinc (BOINC client), folding (Folding@home) or custom (nicerd's command)");
}

/// `nicer exclusive-programs` and its subcommands, which set @p o's edit.
CLI::App* addPrograms(CLI::App& parent, ProgramsOptions& o) {
    auto* cmd = parent.add_subcommand(
        "exclusive-programs",
        "List the programs that pause the work while they run, or change them (kept across restarts)");
    cmd->add_flag("--json", o.json, "Print JSON");
    cmd->footer(
        "A program is named by its executable's file name (blender, not /usr/bin/blender), as BOINC's\n"
        "exclusive applications are. The work resumes resume-delay seconds after the last one ends.\n"
        "nicerd started with --exclusive-program keeps that list for the run over this one.");
    const auto edit = [&](const char* name, const char* help, desktop::ProgramListEdit which) {
        auto* sub = cmd->add_subcommand(name, help);
        sub->callback([&o, which] { o.edit = which; });
        return sub->add_option("names", o.names, "Programs by their executable's file name");
    };
    edit("add", "Add programs to the list", desktop::ProgramListEdit::Add)->required();
    edit("remove", "Take programs off the list", desktop::ProgramListEdit::Remove)->required();
    edit("set", "Replace the list (no names: none)", desktop::ProgramListEdit::Replace);
    return cmd;
}

/// `nicer boinc` and its subcommands, which set @p o's action.
CLI::App* addBoinc(CLI::App& parent, BoincOptions& o) {
    auto* boinc =
        parent.add_subcommand("boinc", "Show nicerd's BOINC client: projects, tasks, transfers, notices");
    boinc->add_flag("--json", o.json, "Print JSON");
    const auto action = [&](const char* name, const char* help, BoincAction which) {
        auto* cmd = boinc->add_subcommand(name, help);
        cmd->callback([&o, which] { o.action = which; });
        return cmd;
    };
    auto* attach = action("attach", "Attach the BOINC client to a project", BoincAction::Attach);
    attach->add_option("url", o.url, "The project's master URL (its web address)")->required();
    attach->add_option("account-key", o.accountKey, "Your account key, from the project's web site")
        ->required();
    auto* manager = action("attach-manager",
                           "Attach the BOINC client to an account manager; the password is read from stdin",
                           BoincAction::AttachManager);
    manager->add_option("url", o.url, "The account manager's URL")->required();
    manager->add_option("name", o.managerName, "Your name (or email) there")->required();
    action("detach", "Detach the BOINC client from a project (drops its tasks)", BoincAction::Detach)
        ->add_option("url", o.url, "The project's master URL, as `nicer boinc` lists it")
        ->required();
    return boinc;
}

CLI::App* addHistory(CLI::App& parent) {
    auto* cmd = parent.add_subcommand(
        "history",
        "Print nicerd's recent periods (the last 10 minutes) as CSV, a trace `nicer simulate` replays");
    cmd->footer(
        "Columns: time (UTC), idle, work and outside (shares of the machine: the volunteer work's, and what "
        "ran\n"
        "outside your user manager), signal (what the controller answered: machine or outside), paused,\n"
        "temperature (the CPU's, °C, as the temperature rule read it; empty without a sensor), multiplier,\n"
        "overload_count, quota. Numbers are written in full precision, so\n"
        "  nicer history > trace.csv && nicer simulate --trace trace.csv\n"
        "replays nicerd's own decisions: the same quotas, when the history starts with nicerd and no "
        "parameter\n"
        "was changed while it ran (`nicer simulate` takes the parameters as options, and --step is nicerd's\n"
        "period). When nicerd cannot read your user manager's CPU time, the work and outside columns are\n"
        "left out.");
    return cmd;
}

CLI::App* addFetch(CLI::App& parent, FetchOptions& o) {
    auto* cmd = parent.add_subcommand(
        "fetch", "Download work units over HTTP/2: verified, resumable, gentle on your own traffic");
    cmd->footer(
        "MANIFEST_OR_URL is a Metalink 4 file (.meta4), the http(s) URL of one, or the URL of a single "
        "file.\n"
        "Files are written to NAME.part and renamed to NAME once their SHA-256 matches; run the same "
        "command\n"
        "again after an interruption and every file resumes where it stopped. A plain URL has no hash: its\n"
        "file is only checked against the length the server announces, and reported as unverified.\n"
        "Exit status: 0 all files in place, 1 some file failed (or interrupted), 2 bad input.");
    cmd->add_option("MANIFEST_OR_URL", o.source, "Metalink file, or URL of one or of a single file")
        ->required();
    cmd->add_option("--dir", o.dir, "Directory to download into (created if missing)")->required();
    cmd->add_option("--streams", o.streams, "Concurrent HTTP/2 streams, at most (K)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{256}))
        ->capture_default_str();
    cmd->add_option("--max-rate", o.maxRate, "Receive rate cap in bytes/s, e.g. 500k, 10M (1024-based)");
    cmd->add_flag("--nice", o.nice, "Yield the link to your own traffic (and keep under --max-rate)");
    cmd->add_option("--ca-file", o.caFile, "Extra CA certificates (PEM) to trust for https servers");
    cmd->add_option("--order", o.order,
                    "Which file gets a free stream first: srpt (smallest remaining) or fifo")
        ->capture_default_str();
    cmd->add_flag("--json", o.json, "Print a machine-readable summary on stdout at the end");
    cmd->add_option("--attempts", o.attempts, "Attempts per mirror before trying the next one")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    cmd->add_option("--retry-wait", o.retryWait, "First wait before a retry, in seconds (doubles up to 60 s)")
        ->check(CLI::Range(0.001, 3600.0))
        ->capture_default_str();
    cmd->add_option("--stall-timeout", o.stallTimeout,
                    "Seconds without data (while the server may send) before a connection is dropped")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    cmd->add_option(
           "--min-rate", o.minRate,
           "Bytes/s a connection must deliver over each stall timeout while nicer holds nothing back "
           "(a trickle is dropped like a stall); 0 for no minimum")
        ->capture_default_str();
    return cmd;
}

CLI::App* addSimulate(CLI::App& parent, SimulateOptions& o) {
    auto* cmd =
        parent.add_subcommand("simulate", "Replay a CPU trace through the controller (CSV on stdout)");
    cmd->footer(
        "The trace holds one idle fraction of the whole machine (0..1) per line; blank lines and # comments\n"
        "are ignored, and a CSV with an 'idle' column in its header is accepted. A CSV with 'work'\n"
        "(or 'background') and 'outside' columns too, shares of the machine used by the work and\n"
        "outside the user manager, can be replayed with the split signal; 'signal' (machine or outside,\n"
        "followed by --signal auto), 'paused' (0 or 1) and 'temperature' (°C, read by the temperature rule\n"
        "unless the thermal model runs; empty for none) columns too: `nicer history` writes such a trace.\n"
        "'-' reads stdin.\n"
        "Output columns: step,idle,multiplier,overload_count,quota; with the outside signal\n"
        "step,idle,work,outside,multiplier,overload_count,quota, with signal and paused after outside when\n"
        "the trace has them, and temperature,held_by at the end with the thermal model or the trace's\n"
        "temperatures.\n"
        "The thermal model (--thermal-gain more than 0): the CPU's temperature approaches\n"
        "ambient + gain x the busy share (the work's as capped, plus your programs' where the trace has the\n"
        "work's column) with time constant tau; the temperature rule holds it at --temperature-target.\n"
        "The memory model (--memory-total more than 0): your programs need --memory-foreground GiB x the\n"
        "busy share, the work keeps up to --memory-work GiB under what the memory rule leaves it, and "
        "programs\n"
        "beside the work wait on memory as the two fill the last 5% of the total; the work's memory\n"
        "follows a lower limit with time constant --memory-tau (less than 0: no swap, and only a stopped\n"
        "one of its --memory-instances frees its share); the columns\n"
        "memory_stall,work_memory_gib,memory_hold follow temperature,held_by.");
    cmd->add_option("--trace", o.tracePath, "Trace to replay")->required();
    options::addSignalOption(
        *cmd, o.signal,
        "What the controller answers: machine (the thesis: the whole machine's idle time), "
        "outside (only the demand from outside the user manager; needs the trace's work and "
        "outside columns), auto (outside when the trace has those columns)");
    // The controller's parameters, from their table; a trace has no clock, so the period is not one.
    options::addParameterOptions(*cmd, o.params, options::PeriodOption::Left);
    cmd->add_option("--thermal-gain", o.thermal.gain,
                    "°C the whole machine busy adds to the thermal model's temperature; 0: no model")
        ->capture_default_str();
    cmd->add_option("--thermal-ambient", o.thermal.ambient, "°C of the thermal model with the machine idle")
        ->capture_default_str();
    cmd->add_option("--thermal-tau", o.thermal.tau, "Seconds of the thermal model's time constant")
        ->capture_default_str();
    cmd->add_option("--memory-total", o.memory.totalGiB, "GiB of the memory model's machine; 0: no model")
        ->capture_default_str();
    cmd->add_option("--memory-work", o.memory.workGiB, "GiB the work wants in the memory model")
        ->capture_default_str();
    cmd->add_option("--memory-foreground", o.memory.foregroundGiB,
                    "GiB your programs need in the memory model with the machine busy")
        ->capture_default_str();
    cmd->add_option("--memory-instances", o.memory.instances, "The work's instances in the memory model")
        ->capture_default_str();
    cmd->add_option("--memory-tau", o.memory.reclaimTau,
                    "Seconds the work's memory takes to follow a lower limit in the memory model (0: at "
                    "once; less than 0: no swap)")
        ->capture_default_str();
    cmd->add_option(
           "--step", o.stepSeconds,
           "Seconds of one trace line (nicerd's period): the rules' clock and the thermal model's step")
        ->capture_default_str();
    return cmd;
}

CLI::App* addSample(CLI::App& parent, SampleOptions& o) {
    auto* cmd = parent.add_subcommand("sample", "Print the machine's live idle and busy CPU fractions");
    cmd->add_option("--period", o.periodSeconds,
                    "Seconds between samples, " + control::rangeText(periodInfo()))
        ->check(CLI::Range(periodInfo().min, periodInfo().max))
        ->capture_default_str();
    cmd->add_option("--count", o.count, "Number of samples to print (0: until interrupted)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_flag("--csv", o.csv, "Print CSV (elapsed_s,idle,busy,cpus) instead of a table");
    cmd->add_option("--proc-stat", o.procStat, "Where to read the CPU counters")->capture_default_str();
    return cmd;
}

} // namespace

int runCommandLine(int argc, char** argv) {
    CLI::App app{"nicer: donate your computer's spare CPU to volunteer computing without feeling it"};
    app.set_version_flag("--version", NICER_VERSION);
    app.require_subcommand(1);

    // In `nicer --help`'s order: the everyday commands first, then the tools.
    DaemonCommandOptions daemonOptions;
    std::optional<DaemonCommand> daemonCommand;
    addDaemonCommands(app, daemonOptions, daemonCommand);
    ProgramsOptions programs;
    auto* programsCmd = addPrograms(app, programs);
    BoincOptions boinc;
    auto* boincCmd = addBoinc(app, boinc);
    auto* historyCmd = addHistory(app);
    FetchOptions fetch;
    auto* fetchCmd = addFetch(app, fetch);
    SimulateOptions simulate;
    auto* simulateCmd = addSimulate(app, simulate);
    SampleOptions sample;
    auto* sampleCmd = addSample(app, sample);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // Help and version exit 0; every real usage error is "bad input".
        return app.exit(e) == 0 ? kExitOk : kExitBadInput;
    }

    if (daemonCommand) {
        return runDaemonCommand(*daemonCommand, daemonOptions);
    }
    if (*programsCmd) {
        return runPrograms(programs);
    }
    if (*boincCmd) {
        return runBoincCommand(boinc);
    }
    if (*historyCmd) {
        return runHistory();
    }
    if (*fetchCmd) {
        return runFetch(fetch);
    }
    if (*simulateCmd) {
        return runSimulate(simulate);
    }
    if (*sampleCmd) {
        return runSample(sample);
    }
    return kExitBadInput;
}

} // namespace nicer::cli
