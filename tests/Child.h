#pragma once

// Child processes in tests: a program started with pipes to its stdin and stdout (a bus daemon, a harness),
// its first line read with a deadline, and the process ended and reaped with the object.

#include "Poll.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace nicer::test {

/// The first line of @p fd, waiting at most @p timeout; empty at the end of the stream or past the timeout.
inline std::string readLine(int fd, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char c = 0;
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd in{fd, POLLIN, 0};
        if (left.count() <= 0 || ::poll(&in, 1, static_cast<int>(left.count())) <= 0 ||
            ::read(fd, &c, 1) != 1 || c == '\n') {
            return line;
        }
        line += c;
    }
}

/// A child process, killed (SIGTERM) and reaped with the object unless stop() reaped it before.
class Child {
public:
    Child() = default;
    ~Child() { stop(); }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    /// Starts @p argv; its stdin and stdout are pipes (in(), out()), its stderr goes to @p errors if given.
    void start(const std::vector<std::string>& argv, const std::filesystem::path& errors = {}) {
        int toChild[2];
        int fromChild[2];
        REQUIRE(::pipe2(toChild, O_CLOEXEC) == 0);
        REQUIRE(::pipe2(fromChild, O_CLOEXEC) == 0);
        m_pid = ::fork();
        REQUIRE(m_pid >= 0);
        if (m_pid == 0) {
            ::dup2(toChild[0], STDIN_FILENO);
            ::dup2(fromChild[1], STDOUT_FILENO);
            if (!errors.empty()) {
                const int fd = ::open(errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                ::dup2(fd, STDERR_FILENO);
            }
            std::vector<char*> args;
            for (const auto& a : argv) {
                args.push_back(const_cast<char*>(a.c_str()));
            }
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
        ::close(toChild[0]);
        ::close(fromChild[1]);
        m_in = toChild[1];
        m_out = fromChild[0];
    }
    int in() const { return m_in; }
    int out() const { return m_out; }
    /// Closes its stdin, then waits @p grace for it to end before SIGTERM.
    void stop(std::chrono::milliseconds grace = std::chrono::seconds(5)) {
        if (m_in >= 0) {
            ::close(m_in);
            m_in = -1;
        }
        if (m_pid > 0) {
            if (!pollUntil([this] { return ::waitpid(m_pid, nullptr, WNOHANG) != 0; }, grace,
                           std::chrono::milliseconds(10))) {
                ::kill(m_pid, SIGTERM);
                ::waitpid(m_pid, nullptr, 0);
            }
            m_pid = -1;
        }
        if (m_out >= 0) {
            ::close(m_out);
            m_out = -1;
        }
    }

private:
    pid_t m_pid = -1;
    int m_in = -1;
    int m_out = -1;
};

} // namespace nicer::test
