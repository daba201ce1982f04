#pragma once

#include "util/Result.h"

#include <istream>
#include <string>
#include <vector>

namespace nicer::control {

/**
 * Reads a recorded idle trace: one idle fraction of the whole machine (0..1) per line.
 *
 * Blank lines and `#` comments are ignored. A CSV whose header has an `idle` column is accepted too (for
 * example the output of `nicer simulate` or of `nicer sample --csv`). Errors name @p source and the line.
 */
Result<std::vector<double>> readIdleTrace(std::istream& in, const std::string& source);

} // namespace nicer::control
