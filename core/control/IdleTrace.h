#pragma once

#include "control/Controller.h"
#include "control/Presence.h"
#include "util/Result.h"

#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace nicer::control {

/// One period of a recorded trace, shares of the whole machine.
struct TracePeriod {
    double idle = 0.0; ///< idle fraction of the whole machine (the thesis's signal)
    /// The work's share and the share used outside the user manager (the split signal, Signal::Outside);
    /// both or neither.
    std::optional<double> work;
    std::optional<double> outside;
    /// What nicerd answered in this period (Signal::Machine or Signal::Outside), from a `signal` column;
    /// `nicer simulate --signal auto` follows it, as nicerd follows `cpu.idle` from one period to the next.
    std::optional<Signal> signal;
    /// Whether the work was paused in this period, from a `paused` column: the controller holds, and starts
    /// afresh when the work resumes.
    std::optional<bool> paused;
    /// The CPU's temperature the volunteer's rules read in this period, in °C, from a `temperature` column;
    /// none where the field is empty (no sensor). `nicer simulate` feeds it to the temperature rule.
    std::optional<double> temperature;
    /// Whether the volunteer was at the machine, from a `presence` column (here, away, unknown): the profile
    /// in force in that period.
    std::optional<Presence> presence;
};

/**
 * Reads a recorded trace: one idle fraction of the whole machine (0..1) per line.
 *
 * Blank lines and `#` comments are ignored. A CSV whose header has an `idle` column is accepted too (for
 * example the output of `nicer simulate` or `nicer sample --csv`); when it also has
 * `work` (or `background`) and `outside` columns, each period carries the split signal too; `signal`
 * (machine or outside), `paused` (0 or 1), `temperature` (°C, empty for none) and `presence` (here, away or
 * unknown) columns, as `nicer history` writes them, are read too. Errors name @p source and the line.
 */
Result<std::vector<TracePeriod>> readTrace(std::istream& in, const std::string& source);

} // namespace nicer::control
