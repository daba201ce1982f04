#pragma once

#include "EndWithTest.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace nicer::test {

/// A real process, `sleep infinity`, that runs until stop() or the end of its scope kills and reaps it (never
/// ends on its own while a slow test still counts on it): for an actuator to stop and continue, or run from
/// @p program (a copy of sleep under another name: argv[0] is that path, its comm the file's name).
class ChildProcess {
public:
    explicit ChildProcess(const std::filesystem::path& program = "sleep") {
        const pid_t test = ::getpid();
        m_pid = ::fork();
        REQUIRE(m_pid >= 0);
        if (m_pid == 0) {
            endWithTest(test);
            ::execlp(program.c_str(), program.c_str(), "infinity", static_cast<char*>(nullptr));
            ::_exit(127);
        }
    }
    ~ChildProcess() { stop(); }
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    void stop() {
        if (m_pid > 0) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, nullptr, 0);
            m_pid = -1;
        }
    }
    pid_t pid() const { return m_pid; }

    /// The state letter of /proc/<pid>/stat: 'T' when stopped, 'S' or 'R' when running.
    char state() const {
        // std::getline, not istreambuf_iterator: a process that ends while the file is read fails the read
        // with ESRCH, which libstdc++'s filebuf throws; getline turns it into a failed stream.
        std::ifstream in("/proc/" + std::to_string(m_pid) + "/stat");
        std::string text;
        std::getline(in, text);
        const auto close = text.rfind(')');
        return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
    }

private:
    pid_t m_pid = -1;
};

} // namespace nicer::test
