#pragma once

#include "EndWithTest.h"
#include "Poll.h"
#include "cli/RunCommand.h"
#include "dbus/client/DaemonClient.h"

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace nicer::test {

/// A real nicerd child process with its own state directory (its config, state and data); stopped (SIGTERM)
/// when destroyed.
class NicerdProcess {
public:
    /// @p env: further environment variables for nicerd, e.g. a PATH with fake clients.
    NicerdProcess(const std::vector<std::string>& args, const std::filesystem::path& stateDir,
                  const std::vector<std::pair<std::string, std::string>>& env = {})
        : m_log(stateDir / "nicerd.log") {
        std::filesystem::create_directories(stateDir);
        const pid_t test = ::getpid();
        m_pid = ::fork();
        if (m_pid == 0) {
            endWithTest(test);
            ::setenv("XDG_STATE_HOME", stateDir.c_str(), 1);
            ::setenv("XDG_CONFIG_HOME", stateDir.c_str(), 1);
            ::setenv("XDG_DATA_HOME", (stateDir / "data").c_str(), 1);
            for (const auto& [name, value] : env) {
                ::setenv(name.c_str(), value.c_str(), 1);
            }
            const int fd = ::open(m_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(fd, STDERR_FILENO);
            ::dup2(fd, STDOUT_FILENO);
            std::vector<char*> argv{const_cast<char*>(NICERD)};
            for (const auto& a : args) {
                argv.push_back(const_cast<char*>(a.c_str()));
            }
            argv.push_back(nullptr);
            ::execv(NICERD, argv.data());
            ::_exit(127);
        }
    }
    ~NicerdProcess() { stop(); }
    NicerdProcess(const NicerdProcess&) = delete;
    NicerdProcess& operator=(const NicerdProcess&) = delete;

    pid_t pid() const { return m_pid; }

    /// Polls nicerd's D-Bus status until it answers (true) or the process has exited (false).
    /// When it is not ready, its log goes to stderr (ctest shows it for a failed test).
    bool waitReady() {
        bool answered = false;
        pollUntil(
            [&] {
                auto client = dbus::DaemonClient::connect();
                answered = client && client->status();
                return answered || exited();
            },
            std::chrono::seconds(30));
        if (!answered) {
            std::cerr << (exited() ? "nicerd exited before it answered on D-Bus"
                                   : "nicerd did not answer on D-Bus within 30 s")
                      << "; its log:\n"
                      << log() << '\n';
        }
        return answered;
    }

    bool exited() {
        if (m_status) {
            return true;
        }
        int status = 0;
        if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
            m_status = status;
            return true;
        }
        return false;
    }

    /// SIGTERM, then waits for the exit; returns the exit status (-1 if it had to be killed).
    int stop() {
        if (m_pid <= 0 || exited()) {
            return exitCode();
        }
        ::kill(m_pid, SIGTERM);
        if (!pollUntil([&] { return exited(); }, std::chrono::seconds(30), std::chrono::milliseconds(50))) {
            ::kill(m_pid, SIGKILL);
            int status = 0;
            ::waitpid(m_pid, &status, 0);
            m_status = status;
            return -1;
        }
        return exitCode();
    }

    void kill9() {
        ::kill(m_pid, SIGKILL);
        int status = 0;
        ::waitpid(m_pid, &status, 0);
        m_status = status;
    }

    int exitCode() const { return m_status && WIFEXITED(*m_status) ? WEXITSTATUS(*m_status) : -1; }

    std::string log() const { return readFile(m_log); }

private:
    std::filesystem::path m_log;
    pid_t m_pid = -1;
    std::optional<int> m_status;
};

/// A new, empty state directory for one nicerd of a test (under the temp dir, one tree per test process).
inline std::filesystem::path freshStateDir(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() / ("nicer-it-" + std::to_string(::getpid())) / name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

/// nicerd's status over D-Bus, or nothing while it does not answer.
inline std::optional<api::DaemonState> tryDaemonStatus() {
    auto client = dbus::DaemonClient::connect();
    if (!client) {
        return std::nullopt;
    }
    auto s = client->status();
    return s ? std::optional<api::DaemonState>(std::move(*s)) : std::nullopt;
}

/// Polls nicerd's status every @p interval until @p holds says it is so (true), or 30 s passed.
inline bool waitForStatus(const std::function<bool(const api::DaemonState&)>& holds,
                          std::chrono::milliseconds interval = std::chrono::milliseconds(100)) {
    return pollUntil(
        [&] {
            const auto s = tryDaemonStatus();
            return s && holds(*s);
        },
        std::chrono::seconds(30), interval);
}

} // namespace nicer::test
