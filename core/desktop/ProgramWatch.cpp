#include "desktop/ProgramWatch.h"

#include <algorithm>
#include <cctype>
#include <fstream>

namespace nicer::desktop {

namespace {

/// The kernel keeps at most this many bytes of a process's name in comm (TASK_COMM_LEN - 1).
constexpr std::size_t kCommLength = 15;

std::string firstLine(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

/// The file name of argv[0] in /proc/PID/cmdline; empty for a kernel thread or a process gone.
std::string commandName(const std::filesystem::path& cmdline) {
    std::ifstream in(cmdline, std::ios::binary);
    std::string argv0;
    std::getline(in, argv0, '\0');
    const auto slash = argv0.rfind('/');
    return slash == std::string::npos ? argv0 : argv0.substr(slash + 1);
}

bool isPid(const std::string& name) {
    return !name.empty() &&
           std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); });
}

} // namespace

Result<void> validateProgramName(std::string_view name) {
    if (name.empty()) {
        return Error{"a program name is empty: write the name of its executable, e.g. blender"};
    }
    if (name.find('/') != std::string_view::npos) {
        return Error{"'" + std::string(name) + "' is a path: write only the executable's file name (" +
                     std::string(name.substr(name.rfind('/') + 1)) + ")"};
    }
    if (name.size() > 255) {
        return Error{"a program name of " + std::to_string(name.size()) +
                     " bytes is longer than any file name (255)"};
    }
    if (std::any_of(name.begin(), name.end(),
                    [](unsigned char c) { return std::isspace(c) || std::iscntrl(c); })) {
        return Error{"'" + std::string(name) +
                     "' holds a space or a control character: write the executable's name alone, without its "
                     "arguments"};
    }
    return {};
}

std::vector<std::string> ProgramWatch::running() const {
    if (m_names.empty()) {
        return {};
    }
    std::vector<bool> found(m_names.size(), false);
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(m_procDir, ec)) {
        const std::string pid = entry.path().filename().string();
        if (!isPid(pid)) {
            continue;
        }
        const std::string comm = firstLine(entry.path() / "comm");
        if (comm.empty()) {
            continue; // gone
        }
        for (std::size_t i = 0; i < m_names.size(); ++i) {
            const std::string& name = m_names[i];
            if (found[i]) {
                continue;
            }
            if (name.size() <= kCommLength) {
                found[i] = comm == name;
            } else if (comm.size() == kCommLength && name.starts_with(comm)) {
                // comm is cut short: the command line says whether it is this name or another that begins
                // alike.
                found[i] = commandName(entry.path() / "cmdline") == name;
            }
        }
    }
    std::vector<std::string> names;
    for (std::size_t i = 0; i < m_names.size(); ++i) {
        if (found[i]) {
            names.push_back(m_names[i]);
        }
    }
    return names;
}

} // namespace nicer::desktop
