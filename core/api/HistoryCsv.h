#pragma once

#include "api/Sample.h"

#include <string>
#include <vector>

namespace nicer::api {

/// Whether every sample has the split signal's shares (its outside known): only then does historyCsv() write
/// the work and outside columns, since a trace has them for every period or none.
bool historyHasSplit(const std::vector<Sample>& history);

/**
 * `nicer history`'s CSV, a trace that control::readTrace() reads and `nicer simulate` replays: a header, then
 * a line per sample, oldest first. Columns: time (UTC, ms), idle, work and outside (when historyHasSplit()),
 * signal (machine or outside), paused (0 or 1), temperature (°C; empty without a sensor), multiplier,
 * overload_count, quota. Numbers are written in full precision, so a replay reads what nicerd computed with.
 */
std::string historyCsv(const std::vector<Sample>& history);

} // namespace nicer::api
