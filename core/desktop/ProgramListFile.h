#pragma once

#include "util/Result.h"

#include <string>
#include <vector>

namespace nicer::desktop {

/**
 * Reads the file where nicerd keeps the named programs set at run time: one `programs = NAME NAME ...` line
 * (the names apart by spaces, none of which a name may hold; none at all for an empty list), blank lines and
 * # comments. One line, so that a file cut short at a line end is told from a shorter list. Errors name
 * @p source and the line: a name that validateProgramName refuses, a second line, no line.
 */
Result<std::vector<std::string>> readProgramListFile(const std::string& text, const std::string& source);

/// The text readProgramListFile reads back as @p names (each valid).
std::string writeProgramListFile(const std::vector<std::string>& names);

/**
 * The list a volunteer asked for, checked: each name valid (the error names the first bad one), each kept
 * once, in the order first given.
 */
Result<std::vector<std::string>> checkProgramList(const std::vector<std::string>& names);

} // namespace nicer::desktop
