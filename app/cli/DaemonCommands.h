#pragma once

#include <string>
#include <vector>

namespace nicer::cli {

struct DaemonCommandOptions {
    bool json = false;
    std::vector<std::string> assignments; ///< KEY=VALUE for `nicer set`
    std::string workloadPreset;           ///< the id for `nicer workload ID`; empty to list them
    std::string pauseFor;                 ///< `nicer pause --for 1h`: a duration; empty: none
    std::string pauseUntil;               ///< `nicer pause --until 18:00`: a time; empty: none
};

/// `nicer status [--json]`, `nicer pause [--for D | --until T]`, `nicer resume`, `nicer set KEY=VALUE...` and
/// `nicer workload [ID]`: talk to nicerd.
enum class DaemonCommand { Status, Pause, Resume, Set, Workload };

int runDaemonCommand(DaemonCommand command, const DaemonCommandOptions& options);

} // namespace nicer::cli
