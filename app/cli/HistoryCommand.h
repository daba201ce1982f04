#pragma once

#include <CLI/CLI.hpp>

namespace nicer::cli {

/// `nicer history`: nicerd's recent periods (GetHistory) as a CSV trace that `nicer simulate` replays.
CLI::App* addHistoryCommand(CLI::App& parent);
int runHistory();

} // namespace nicer::cli
