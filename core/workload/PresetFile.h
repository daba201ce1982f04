#pragma once

#include "util/Result.h"

#include <string>

namespace nicer::workload {

/**
 * Reads the file where nicerd keeps the workload chosen at run time: a `preset = ID` line, blank lines and
 * # comments. Errors name @p source and the line; an id that is neither a preset nor "custom" is one.
 */
Result<std::string> readPresetFile(const std::string& text, const std::string& source);

/// The text readPresetFile reads back as @p id.
std::string writePresetFile(const std::string& id);

} // namespace nicer::workload
