#pragma once

#include "dbus/client/DaemonClient.h"

#include <nlohmann/json.hpp>
#include <string>

namespace nicer::cli {

/// `nicer boinc [--json]`, `nicer boinc attach URL KEY`, `nicer boinc attach-manager URL NAME` (the password
/// on standard input) and `nicer boinc detach URL`: nicerd's BOINC client, through its D-Bus API.
enum class BoincAction { Show, Attach, AttachManager, Detach };

struct BoincOptions {
    BoincAction action = BoincAction::Show;
    bool json = false;
    std::string url;
    std::string accountKey;
    std::string managerName;
};

int runBoincCommand(const BoincOptions& options);

/// The BOINC part of `nicer status`: a few lines, or nothing when no BOINC client runs and no system service
/// is in the way.
void printBoincSummary(const api::BoincStatus& boinc);
/// The BOINC client's state as JSON, for `nicer status --json` and `nicer boinc --json`.
nlohmann::json boincJson(const api::BoincStatus& boinc);

} // namespace nicer::cli
