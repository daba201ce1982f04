#pragma once

#include "control/ControllerParams.h"
#include "workload/WorkloadSpec.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace nicer::daemon {

/// Everything nicerd needs to start, already parsed and validated by its front end.
struct DaemonConfig {
    control::ControllerParams params;
    workload::WorkloadSpec workload;
    /// "auto" (the first supported), "systemd-slice" or "signal-duty-cycle".
    std::string actuator = "auto";
    std::string slice = "nicer.slice";
    std::string procStat = "/proc/stat";
    /// Where parameters set at run time are kept; read at start-up over the config file's.
    std::filesystem::path parameterFile;
    /// Running processes of this user to bring under control too.
    std::vector<pid_t> adopt;
    /// How much history GetHistory returns.
    std::chrono::seconds historySpan{600};
};

/// $XDG_STATE_HOME/nicer/parameters.conf (default ~/.local/state/nicer/parameters.conf).
std::filesystem::path defaultParameterFile();
/// $XDG_CONFIG_HOME/nicer/nicerd.conf (default ~/.config/nicer/nicerd.conf).
std::filesystem::path defaultConfigFile();

} // namespace nicer::daemon
