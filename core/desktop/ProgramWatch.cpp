#include "desktop/ProgramWatch.h"

#include "util/UniqueFd.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <optional>
#include <unistd.h>

namespace nicer::desktop {

namespace {

/// A path holds at most this many bytes (PATH_MAX), and so does the argv[0] worth comparing.
constexpr std::size_t kPathMax = 4096;
/// comm holds at most this many bytes of a program's name (TASK_COMM_LEN - 1).
constexpr std::size_t kCommMax = 15;

struct DirCloser {
    void operator()(DIR* dir) const noexcept { ::closedir(dir); }
};

bool isPid(const char* name) {
    return *name != '\0' && std::all_of(name, name + std::char_traits<char>::length(name),
                                        [](unsigned char c) { return std::isdigit(c); });
}

std::string fileName(std::string_view path) {
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

/// Up to @p buffer's size of the file @p path under the directory @p dir; empty when it cannot be read (the
/// process ended). One open and one read: /proc hands a small file over in one piece.
std::string_view readAt(int dir, const std::string& path, std::array<char, kPathMax>& buffer) {
    const UniqueFd fd(::openat(dir, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd) {
        return {};
    }
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    return n > 0 ? std::string_view(buffer.data(), static_cast<std::size_t>(n)) : std::string_view();
}

/// One process's names, each read the first time a name needs it.
class ProcessNames {
public:
    ProcessNames(int procDir, const char* pid)
        : m_procDir(procDir)
        , m_pid(pid) {
        std::string_view comm = readAt(m_procDir, m_pid + "/comm", m_buffer);
        if (!comm.empty() && comm.back() == '\n') {
            comm.remove_suffix(1);
        }
        m_comm = comm;
    }

    /// Empty when the process ended before its comm was read.
    const std::string& comm() const { return m_comm; }

    /// The file name of argv[0].
    const std::string& commandName() {
        if (!m_commandName) {
            const std::string_view cmdline = readAt(m_procDir, m_pid + "/cmdline", m_buffer);
            m_commandName = fileName(cmdline.substr(0, cmdline.find('\0')));
        }
        return *m_commandName;
    }

    /// The file name of the executable; empty when the exe link cannot be read (another user's process, a
    /// kernel thread, a zombie).
    const std::string& executableName() {
        if (!m_executableName) {
            const std::string link = m_pid + "/exe";
            const ssize_t n = ::readlinkat(m_procDir, link.c_str(), m_buffer.data(), m_buffer.size());
            std::string_view target =
                n > 0 ? std::string_view(m_buffer.data(), static_cast<std::size_t>(n)) : std::string_view();
            constexpr std::string_view kDeleted = " (deleted)"; // replaced on disk (an update) while it runs
            if (target.ends_with(kDeleted)) {
                target.remove_suffix(kDeleted.size());
            }
            m_executableName = fileName(target);
        }
        return *m_executableName;
    }

    /// A program, not a kernel thread or a zombie (neither has an executable or a command line).
    bool hasCommand() { return !executableName().empty() || !commandName().empty(); }

    /**
     * The exe link is read before the command line: reading /proc/PID/cmdline takes the process's mmap_lock,
     * and could wait behind a process that holds it long. Where the link can be read, argv[0] is asked only
     * for what comm cut short (a name longer than comm's 15 bytes that begins with it); comm is otherwise
     * argv[0]'s name already, as the kernel takes it from the file that was run.
     */
    bool matches(const std::string& name) {
        if (m_comm == name) {
            return hasCommand(); // a kernel thread of that name is not the program
        }
        if (!executableName().empty()) {
            if (executableName() == name) {
                return true;
            }
            if (m_comm.size() < kCommMax || !name.starts_with(m_comm)) {
                return false;
            }
        }
        return commandName() == name;
    }

private:
    int m_procDir;
    std::string m_pid;
    std::array<char, kPathMax> m_buffer{};
    std::string m_comm;
    std::optional<std::string> m_commandName;
    std::optional<std::string> m_executableName;
};

} // namespace

Result<void> validateProgramName(std::string_view name) {
    if (name.empty()) {
        return Error{"a program name is empty: write the name of its executable, e.g. blender",
                     ErrorKind::InvalidInput};
    }
    if (name.find('/') != std::string_view::npos) {
        return Error{"'" + std::string(name) + "' is a path: write only the executable's file name (" +
                         std::string(name.substr(name.rfind('/') + 1)) + ")",
                     ErrorKind::InvalidInput};
    }
    if (name.find('#') != std::string_view::npos) {
        return Error{"'" + std::string(name) +
                         "' holds a '#', which nicerd's files read as the start of a comment: no program is "
                         "named so; write its executable's file name",
                     ErrorKind::InvalidInput};
    }
    if (name.size() > 255) {
        return Error{"a program name of " + std::to_string(name.size()) +
                         " bytes is longer than any file name (255): write the executable's file name",
                     ErrorKind::InvalidInput};
    }
    if (std::any_of(name.begin(), name.end(),
                    [](unsigned char c) { return std::isspace(c) || std::iscntrl(c); })) {
        return Error{
            "'" + std::string(name) +
                "' holds a space or a control character: write the executable's name alone, without its "
                "arguments",
            ErrorKind::InvalidInput};
    }
    return {};
}

std::vector<std::string> ProgramWatch::running() const {
    if (m_names.empty()) {
        return {};
    }
    const std::unique_ptr<DIR, DirCloser> dir(::opendir(m_procDir.c_str()));
    if (!dir) {
        return {};
    }
    std::vector<bool> found(m_names.size(), false);
    std::size_t unseen = m_names.size();
    while (unseen > 0) {
        const dirent* entry = ::readdir(dir.get());
        if (entry == nullptr) {
            break;
        }
        if (!isPid(entry->d_name)) {
            continue;
        }
        ProcessNames process(::dirfd(dir.get()), entry->d_name);
        if (process.comm().empty()) {
            continue; // ended since the directory was listed
        }
        for (std::size_t i = 0; i < m_names.size(); ++i) {
            if (!found[i] && process.matches(m_names[i])) {
                found[i] = true;
                --unseen;
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
