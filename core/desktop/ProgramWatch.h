#pragma once

#include "util/Result.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::desktop {

/// Checks a name for the list of named programs: not empty, no '/', '#', whitespace or control character, at
/// most 255 bytes. The error says what is wrong and what to write instead.
Result<void> validateProgramName(std::string_view name);

/**
 * Named programs ("exclusive applications", as BOINC calls them): which of them run now, from /proc. A
 * process matches a name by its kernel name (/proc/PID/comm, the name it was started by, cut at 15 bytes) or
 * by the file name of its executable: of the /proc/PID/exe link where it can be read (another user's process
 * needs root), and of argv[0] in /proc/PID/cmdline where it cannot, or where comm was cut short. Kernel
 * threads and zombies (no executable, no command line) never match. Cheap enough for every period: comm
 * first, then the exe link; the command line, whose read takes the process's mmap_lock, only where those
 * cannot settle it; the scan ends once every name is seen; a process that ends during it is passed over.
 */
class ProgramWatch {
public:
    explicit ProgramWatch(std::filesystem::path procDir = "/proc")
        : m_procDir(std::move(procDir)) {}

    /// The names to look for (each checked by validateProgramName by the caller); none: nothing is read.
    void setNames(std::vector<std::string> names) { m_names = std::move(names); }
    const std::vector<std::string>& names() const { return m_names; }
    /// Scans the process directory: the names that run now, each once, in the order of setNames(). A process
    /// directory that cannot be read gives none.
    std::vector<std::string> running() const;

private:
    std::filesystem::path m_procDir;
    std::vector<std::string> m_names;
};

} // namespace nicer::desktop
