#pragma once

#include "util/Result.h"

#include <string>
#include <vector>

namespace nicer::workload {

/// What volunteer work to run: an argv (never a shell string) and how many copies.
struct WorkloadSpec {
    std::vector<std::string> argv;
    int instances = 1;
    bool demo = false; ///< the built-in demo, shown as such to the user; true exactly when preset is "demo"
    /// Where it came from: a preset's id ("demo", "boinc", "folding") or "custom" for a command given to
    /// nicerd.
    std::string preset = "custom";
};

/// The built-in demo: the thesis's CPU-bound `md5sum /dev/zero`, one per CPU.
WorkloadSpec demoWorkload(int cpuCount);

/// The absolute path of @p command: as given when it holds a '/', else searched in @p pathVariable (PATH).
Result<std::string> resolveExecutable(const std::string& command, const std::string& pathVariable);

} // namespace nicer::workload
