#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace nicer::cli {

struct DaemonCommandOptions {
    bool json = false;
    std::vector<std::string> assignments; ///< KEY=VALUE for `nicer set`
    std::string workloadPreset;           ///< the id for `nicer workload ID`; empty to list them
};

/// `nicer status [--json]`, `nicer pause`, `nicer resume`, `nicer set KEY=VALUE...` and
/// `nicer workload [ID]`: talk to nicerd.
struct DaemonCommands {
    CLI::App* status = nullptr;
    CLI::App* pause = nullptr;
    CLI::App* resume = nullptr;
    CLI::App* set = nullptr;
    CLI::App* workload = nullptr;
};

DaemonCommands addDaemonCommands(CLI::App& parent, DaemonCommandOptions& options);
/// Runs whichever of the commands was given; -1 when none was.
int runDaemonCommand(const DaemonCommands& commands, const DaemonCommandOptions& options);

} // namespace nicer::cli
