#pragma once

#include "desktop/ProgramList.h"

#include <optional>
#include <string>
#include <vector>

namespace nicer::cli {

struct ProgramsOptions {
    /// add, remove or set; none: list them.
    std::optional<desktop::ProgramListEdit> edit;
    std::vector<std::string> names;
    bool json = false;
};

/// `nicer exclusive-programs [add|remove|set NAME...] [--json]`: the named programs that pause the work
/// while they run, listed or changed at nicerd (kept across its restarts).
int runPrograms(const ProgramsOptions& options);

} // namespace nicer::cli
