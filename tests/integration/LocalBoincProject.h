#pragma once

// The local BOINC project (tests/boinc/project, Python) on loopback and a client directory prepared for it,
// for the integration tests that run nicerd with the REAL BOINC client (Debian's boinc-client 7.20.5).

#include "EndWithTest.h"
#include "Poll.h"
#include "cli/RunCommand.h"
#include "dbus/client/DaemonClient.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace nicer::test {

inline const std::string kBoincProject =
    std::string(NICER_TESTS_DIR) + "/boinc/project/boinc_test_project.py";
inline const std::string kBoincAuthenticator = "nicertest_authenticator";

/// A child process (argv, no shell) stopped with SIGTERM when destroyed.
class Child {
public:
    Child(std::vector<std::string> argv, const std::filesystem::path& log) {
        const pid_t test = ::getpid();
        m_pid = ::fork();
        if (m_pid == 0) {
            endWithTest(test);
            const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(fd, STDOUT_FILENO);
            ::dup2(fd, STDERR_FILENO);
            std::vector<char*> args;
            for (auto& a : argv) {
                args.push_back(a.data());
            }
            args.push_back(nullptr);
            ::execvp(args[0], args.data());
            ::_exit(127);
        }
    }
    ~Child() {
        if (m_pid > 0) {
            ::kill(m_pid, SIGTERM);
            ::waitpid(m_pid, nullptr, 0);
        }
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

private:
    pid_t m_pid = -1;
};

inline std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// nicerd's state over D-Bus; the test fails when it does not answer.
inline api::DaemonState boincStatus() {
    auto client = dbus::DaemonClient::connect();
    REQUIRE(client.ok());
    auto s = client->status();
    REQUIRE(s.ok());
    return *s;
}

/// The processes of the test project's app (the BOINC tasks) on this machine.
inline std::vector<pid_t> appPids() {
    std::vector<pid_t> pids;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const auto name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        if (readFile(entry.path() / "cmdline").find("nicertest_app") != std::string::npos) {
            pids.push_back(std::stoi(name));
        }
    }
    return pids;
}

/**
 * The project's server in @p dir/server with @p options (the work units, --task-seconds, ...), and the
 * client directory @p dir/data/nicer/boinc (where nicerd's boinc preset keeps it, with XDG_DATA_HOME =
 * @p dir/data) prepared for it: the app (anonymous platform) and test-friendly cc_config.xml and override.
 */
class LocalBoincProject {
public:
    LocalBoincProject(const std::filesystem::path& dir, std::vector<std::string> options, double taskSeconds)
        : m_dir(dir) {
        std::filesystem::create_directories(dir / "server");
        std::filesystem::create_directories(boincDir());
        std::vector<std::string> argv{"python3",    kBoincProject,         "--dir", (dir / "server").string(),
                                      "--url-file", (dir / "url").string()};
        argv.insert(argv.end(), options.begin(), options.end());
        m_server.emplace(argv, dir / "server.log");
        REQUIRE(pollUntil(
            [&] {
                std::error_code ec;
                return std::filesystem::file_size(dir / "url", ec) > 0 && !ec;
            },
            std::chrono::seconds(30)));
        m_url = readFile(dir / "url");
        m_url.erase(m_url.find_last_not_of(" \n") + 1);
        const auto prepared = runCommand("python3 " + kBoincProject + " prepare-client --boinc-dir " +
                                         boincDir().string() + " --url " + m_url + " --task-seconds " +
                                         std::to_string(taskSeconds) + " --client-config");
        REQUIRE(prepared.exitCode == 0);
    }

    const std::string& url() const { return m_url; }
    std::filesystem::path boincDir() const { return m_dir / "data" / "nicer" / "boinc"; }
    std::filesystem::path log() const { return m_dir / "server.log"; }
    /// The server's state file (tests/boinc/project/README.md, "The state file").
    nlohmann::json state() const {
        const auto text = readFile(m_dir / "server" / "state.json");
        return text.empty() ? nlohmann::json::object() : nlohmann::json::parse(text);
    }
    /// The results the client reported, with their outcome ("success", "error") and exit status.
    std::vector<nlohmann::json> reported() const {
        std::vector<nlohmann::json> results;
        const auto s = state();
        if (s.contains("results")) {
            for (const auto& [name, result] : s["results"].items()) {
                if (result["status"] == "reported") {
                    results.push_back(result);
                }
            }
        }
        return results;
    }

private:
    std::filesystem::path m_dir;
    std::optional<Child> m_server;
    std::string m_url;
};

} // namespace nicer::test
