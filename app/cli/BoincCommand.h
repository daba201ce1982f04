#pragma once

#include "dbus/client/DaemonClient.h"

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <string>

namespace nicer::cli {

struct BoincOptions {
    bool json = false;
    std::string url;
    std::string accountKey;
    std::string managerName;
};

/// `nicer boinc [--json]`, `nicer boinc attach URL KEY`, `nicer boinc attach-manager URL NAME` (the password
/// on standard input) and `nicer boinc detach URL`: nicerd's BOINC client, through its D-Bus API.
struct BoincCommands {
    CLI::App* boinc = nullptr;
    CLI::App* attach = nullptr;
    CLI::App* attachManager = nullptr;
    CLI::App* detach = nullptr;
};

BoincCommands addBoincCommands(CLI::App& parent, BoincOptions& options);
/// Runs the command when `nicer boinc` was given; -1 when it was not.
int runBoincCommand(const BoincCommands& commands, const BoincOptions& options);

/// The BOINC part of `nicer status`: a few lines, or nothing when no BOINC client runs and no system service
/// is in the way.
void printBoincSummary(const api::BoincStatus& boinc);
/// The BOINC client's state as JSON, for `nicer status --json` and `nicer boinc --json`.
nlohmann::json boincJson(const api::BoincStatus& boinc);

} // namespace nicer::cli
