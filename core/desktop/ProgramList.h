#pragma once

#include "util/Result.h"

#include <string>
#include <vector>

// The list of named programs ("exclusive applications") that pause the work while they run: checking it,
// changing it, and the file in which nicerd keeps the list set at run time.

namespace nicer::desktop {

/**
 * Reads the file where nicerd keeps the named programs set at run time: one `programs = NAME NAME ...` line
 * (the names apart by spaces, none of which a name may hold; none at all for an empty list), blank lines and
 * # comments. One line, so that a file cut short at a line end is told from a shorter list. Errors name
 * @p source and the line: a name that validateProgramName refuses, a second line, no line.
 */
Result<std::vector<std::string>> readProgramListFile(const std::string& text, const std::string& source);

/// The names apart by spaces ("" for none), as the file and nicerd's messages write them.
std::string joinedNames(const std::vector<std::string>& names);

/// The text readProgramListFile reads back as @p names (each valid).
std::string writeProgramListFile(const std::vector<std::string>& names);

/// How `nicer exclusive-programs` changes the list.
enum class ProgramListEdit {
    Add,    ///< the names not in it yet, at its end
    Remove, ///< the names, each of which must be in it
    Replace ///< the names alone (none: an empty list)
};

/**
 * @p current changed by @p edit with @p names, checked as checkProgramList does. Removing a name that is not
 * in the list is an error that names the list, so that a typo is not taken for done.
 */
Result<std::vector<std::string>> editProgramList(const std::vector<std::string>& current,
                                                 ProgramListEdit edit, const std::vector<std::string>& names);

/**
 * The list a volunteer asked for, checked: each name valid (the error names the first bad one), each kept
 * once, in the order first given.
 */
Result<std::vector<std::string>> checkProgramList(const std::vector<std::string>& names);

} // namespace nicer::desktop
