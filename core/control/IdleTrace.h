#pragma once

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
};

/**
 * Reads a recorded trace: one idle fraction of the whole machine (0..1) per line.
 *
 * Blank lines and `#` comments are ignored. A CSV whose header has an `idle` column is accepted too (for
 * example the output of `nicer simulate` or `nicer sample --csv`); when it also has
 * `work` (or `background`) and `outside` columns, each period carries the split signal too. Errors name
 * @p source and the line.
 */
Result<std::vector<TracePeriod>> readTrace(std::istream& in, const std::string& source);

} // namespace nicer::control
