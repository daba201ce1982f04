// nicer: command-line client of the nicer core.
#include "BoincCommand.h"
#include "DaemonCommands.h"
#include "ExitCode.h"
#include "FetchCommand.h"
#include "HistoryCommand.h"
#include "SampleCommand.h"
#include "SimulateCommand.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

namespace {

int run(int argc, char** argv) {
    using namespace nicer::cli;

    CLI::App app{"nicer: donate your computer's spare CPU to volunteer computing without feeling it"};
    app.set_version_flag("--version", NICER_VERSION);
    app.require_subcommand(1);

    SimulateOptions simulate;
    SampleOptions sample;
    FetchOptions fetch;
    auto* simulateCmd = addSimulateCommand(app, simulate);
    auto* sampleCmd = addSampleCommand(app, sample);
    auto* fetchCmd = addFetchCommand(app, fetch);
    auto* historyCmd = addHistoryCommand(app);
    DaemonCommandOptions daemonOptions;
    const auto daemonCmds = addDaemonCommands(app, daemonOptions);
    BoincOptions boincOptions;
    const auto boincCmds = addBoincCommands(app, boincOptions);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // Help and version exit 0; every real usage error is "bad input".
        return app.exit(e) == 0 ? kExitOk : kExitBadInput;
    }

    if (*simulateCmd) {
        return runSimulate(simulate);
    }
    if (*sampleCmd) {
        return runSample(sample);
    }
    if (*fetchCmd) {
        return runFetch(fetch);
    }
    if (*historyCmd) {
        return runHistory();
    }
    if (const int status = runDaemonCommand(daemonCmds, daemonOptions); status >= 0) {
        return status;
    }
    if (const int status = runBoincCommand(boincCmds, boincOptions); status >= 0) {
        return status;
    }
    return kExitBadInput;
}

} // namespace

int main(int argc, char** argv) {
    // Errors are values inside; what escapes (out of memory, a bug) still ends with a message, not abort().
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "nicer: internal error: " << e.what() << '\n';
    } catch (...) {
        std::cerr << "nicer: internal error\n";
    }
    return nicer::cli::kExitFailure;
}
