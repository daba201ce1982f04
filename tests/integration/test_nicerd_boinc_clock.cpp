// BOINC's clock under nicer (core/daemon/BoincClock.h) with the REAL BOINC client (Debian's 7.20.5) and the
// local test project, whose work unit has a tight bound (--bound-factor 2: a 61 CPU-second task that BOINC
// aborts at 122 s of elapsed time, exit status 197, as a project sets it). BOINC counts a running task's
// elapsed time by the wall clock; nicerd stops the client (never its tasks) in spans BOINC does not count
// whenever that clock runs ahead of the task's CPU time. Each case holds the task at a low share for longer
// than its bound in wall time, and the task must still finish and be reported a success:
// - a busy desktop outside the work (busy 85% of every CPU, which the kernel runs first) and nicer's
//   controller, until the task has run 10% past its bound in wall time (then it finishes at full speed);
// - the temperature rule's long cap (an emulated sensor that follows the work, its target allowing 20% of
//   the machine), until the task has run 10% past its bound (then a target it never reaches).
// The same run with the clock left to BOINC (--boinc-clock 0, nicer's behaviour before) is aborted; that
// case is hidden ([.]) and run by hand for the record, as it only shows BOINC's own rule:
//   nicer_boinc_integration_tests '[boinc-clock-off]'   (or '[busy-desktop]' for both busy-desktop runs)
// Covers the hybrid machines' path (the private user manager, cpu controller on v1).
#include "LocalBoincProject.h"
#include "ModelSensor.h"
#include "NicerdProcess.h"
#include "Poll.h"
#include "Skip.h"
#include "cli/RunCommand.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <sys/prctl.h>

using namespace nicer;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr double kTaskSeconds = 61.0;
constexpr double kBoundFactor = 2.0; // BOINC aborts the task at 122 s of elapsed time

/// The user's own programs, outside the work: one process on every CPU, each busy 8.5 ms of every 10 ms, in
/// a cgroup of their own at the root with the largest weight (cpu.shares on v1, cpu.weight on v2), so that
/// the kernel runs them before the work whenever they want the CPU, as the .deb's root idle slice has every
/// program on a desktop: the work gets their gaps, about 0.3 of a CPU on two, less nicer's band. (At equal
/// weight, programs that sleep as often as these lose part of what they want to the work on this kernel, and
/// the task's share is no longer the low one this is about.) They die with the test.
class BusyDesktop {
public:
    BusyDesktop() {
        const bool v2 = std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers");
        m_cgroup = v2 ? "/sys/fs/cgroup/nicer-it-busy-desktop" : "/sys/fs/cgroup/cpu/nicer-it-busy-desktop";
        std::filesystem::create_directories(m_cgroup);
        std::ofstream(m_cgroup / (v2 ? "cpu.weight" : "cpu.shares")) << (v2 ? "10000\n" : "262144\n");
        for (long i = 0; i < ::sysconf(_SC_NPROCESSORS_ONLN); ++i) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                ::prctl(PR_SET_PDEATHSIG, SIGKILL);
                std::ofstream(m_cgroup / "cgroup.procs") << "0\n";
                for (;;) {
                    const auto until = std::chrono::steady_clock::now() + 8500us;
                    while (std::chrono::steady_clock::now() < until) {
                    }
                    const timespec rest{0, 1'500'000};
                    ::nanosleep(&rest, nullptr);
                }
            }
            m_pids.push_back(pid);
        }
        REQUIRE(test::pollUntil([&] { return test::readFile(m_cgroup / "cgroup.procs").size() > 0; }, 5s));
    }
    ~BusyDesktop() {
        for (const pid_t p : m_pids) {
            ::kill(p, SIGKILL);
            ::waitpid(p, nullptr, 0);
        }
        std::error_code ignored;
        std::filesystem::remove(m_cgroup, ignored);
    }
    BusyDesktop(const BusyDesktop&) = delete;
    BusyDesktop& operator=(const BusyDesktop&) = delete;

private:
    std::filesystem::path m_cgroup;
    std::vector<pid_t> m_pids;
};

/// What one run of the tight task showed.
struct TightRun {
    bool finished = false;        ///< reported, or aborted by the client
    nlohmann::json result;        ///< the reported result (the project's state file), if any
    double wall = 0.0;            ///< wall seconds from the task's start to its end (or abort)
    double limit = 0.0;           ///< the elapsed-time limit nicerd showed (elapsed_limit_s)
    double maxElapsed = 0.0;      ///< the largest elapsed time nicerd showed
    double cpuAtEnd = 0.0;        ///< the task's CPU seconds last shown
    std::string clock;            ///< a non-empty BoincClock seen while it ran
    bool abortedByClient = false; ///< seen in the error state before it was reported

    /// BOINC aborted the task for its elapsed time: seen so, or reported with exit status 197.
    bool aborted() const { return abortedByClient || (!result.is_null() && result["exit_status"] == 197); }

    std::string figures() const {
        std::ostringstream out;
        out << "the task ran " << wall << " s of wall time for " << cpuAtEnd << " s of CPU; BOINC's elapsed "
            << "time at most " << maxElapsed << " s of its " << limit << " s limit; outcome "
            << (result.is_null() ? "none" : result.dump()) << "; clock \"" << clock << "\"";
        return out.str();
    }
};

/// The wall time the app ran, from the times of its first and last lines in its stderr ("08:28:00
/// nicertest_app: start: ...", "08:30:42 nicertest_app: finished: ..."), as the project received it.
std::optional<double> appWallSeconds(const std::string& stderrText) {
    const auto secondsAt = [&](const std::string& word) -> std::optional<int> {
        const auto at = stderrText.find(" nicertest_app: " + word);
        if (at == std::string::npos || at < 8) {
            return std::nullopt;
        }
        int h = 0, m = 0, sec = 0;
        if (std::sscanf(stderrText.c_str() + at - 8, "%2d:%2d:%2d", &h, &m, &sec) != 3) {
            return std::nullopt;
        }
        return h * 3600 + m * 60 + sec;
    };
    const auto start = secondsAt("start:");
    const auto end = secondsAt("finished:");
    if (!start || !end) {
        return std::nullopt;
    }
    return static_cast<double>((*end - *start + 86400) % 86400);
}

/**
 * Runs nicerd (@p nicerdArgs, the boinc preset) with a client attached to a project of one tight work unit,
 * and follows the task until it is reported or aborted: every second nicerd's state on the bus. @p
 * whileRunning is called once the task runs (to start the foreground); @p pastBound, if given, once the task
 * has run 10% longer than its bound in wall time without being aborted (to end the foreground: what was to be
 * shown is shown, and the rest of the task runs at full speed).
 */
TightRun runTightTask(const fs::path& dir, std::vector<std::string> nicerdArgs,
                      const std::function<void()>& whileRunning,
                      const std::function<void()>& pastBound = {}) {
    fs::remove_all(dir);
    const test::LocalBoincProject project(dir,
                                          {"--workunits", "1", "--task-seconds", std::to_string(kTaskSeconds),
                                           "--bound-factor", std::to_string(kBoundFactor)},
                                          kTaskSeconds);
    INFO("project " << project.url() << ", server log " << project.log());
    nicerdArgs.insert(nicerdArgs.end(), {"--period", "0.5", "--workload-preset", "boinc"});
    test::NicerdProcess daemon(nicerdArgs, dir);
    REQUIRE(daemon.waitReady());
    INFO(daemon.log());
    REQUIRE(test::pollUntil([] { return test::boincStatus().boinc.state == api::BoincState::Running; }, 60s,
                            250ms));
    auto client = dbus::DaemonClient::connect();
    REQUIRE(client.ok());
    REQUIRE(client->boincAttach(project.url(), test::kBoincAuthenticator).ok());

    TightRun run;
    std::optional<std::chrono::steady_clock::time_point> started;
    bool loaded = false;
    bool unloaded = false;
    const auto follow = [&] {
        const auto reported = project.reported();
        if (!reported.empty()) {
            run.result = reported.front();
            if (const auto wall = appWallSeconds(run.result["stderr_out"].get<std::string>())) {
                run.wall = *wall;
            }
            return true; // once acknowledged, the client forgets the task
        }
        const auto s = test::boincStatus();
        if (s.boinc.tasks.empty()) {
            return false;
        }
        const auto& task = s.boinc.tasks.front();
        if (task.state == nicer::api::BoincTaskState::Running && !started) {
            started = std::chrono::steady_clock::now();
        }
        if (started && !loaded) {
            loaded = true;
            whileRunning();
        }
        if (task.state == nicer::api::BoincTaskState::Running ||
            task.state == nicer::api::BoincTaskState::Suspended) {
            run.maxElapsed = std::max(run.maxElapsed, task.elapsedSeconds);
            run.cpuAtEnd = task.cpuSeconds;
            run.limit = std::max(run.limit, task.elapsedLimitSeconds);
            const double wall =
                started ? std::chrono::duration<double>(std::chrono::steady_clock::now() - *started).count()
                        : 0.0;
            if (pastBound && !unloaded && run.limit > 0.0 && wall > 1.1 * run.limit) {
                unloaded = true;
                std::cout << "past the bound: " << wall << " s of wall time, BOINC's elapsed time "
                          << task.elapsedSeconds << " s, " << task.cpuSeconds << " s of CPU" << std::endl;
                pastBound();
            }
        }
        if (!s.boinc.clock.empty()) {
            run.clock = s.boinc.clock;
        }
        if (started && task.state != nicer::api::BoincTaskState::Running &&
            task.state != nicer::api::BoincTaskState::Suspended &&
            task.state != nicer::api::BoincTaskState::Ready && run.wall == 0.0) {
            run.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - *started).count();
            run.abortedByClient = task.state == nicer::api::BoincTaskState::Error;
        }
        return run.abortedByClient;
    };
    run.finished = test::pollUntil(follow, 900s, 1000ms);
    std::cout << "measured: " << run.figures() << std::endl;
    return run;
}

bool boincInstalled() {
    return ::access("/usr/bin/boinc", X_OK) == 0;
}
constexpr const char* kNoBoinc = "Debian's boinc-client is not installed (/usr/bin/boinc)";

/// The checks of a run in which nicer keeps BOINC's clock.
void checkKept(const TightRun& run) {
    INFO(run.figures());
    REQUIRE(run.finished);
    CHECK_FALSE(run.aborted());
    REQUIRE_FALSE(run.result.is_null());
    CHECK(run.result["outcome"] == "success");
    CHECK(run.result["exit_status"] == 0);
    // The limit nicerd shows is BOINC's: the bound (2 x 61 G flops) over the app's 1 G flops.
    CHECK(run.limit == Approx(kTaskSeconds * kBoundFactor).margin(0.5));
    // The task was held long enough that BOINC's wall clock would have passed the bound ...
    CHECK(run.wall > run.limit);
    // ... and BOINC's clock, kept, never came near it, and said so.
    CHECK(run.maxElapsed < 0.9 * run.limit);
    CHECK(double(run.result["final_elapsed_time"]) < run.limit);
    CHECK_THAT(run.clock, Catch::StartsWith("kept: BOINC counted"));
}

} // namespace

TEST_CASE("a BOINC task with a tight bound, held at a low share by a busy desktop, is never aborted for "
          "its elapsed time, since nicer keeps BOINC's clock",
          "[nicerd][boinc][boinc-clock][busy-desktop]") {
    if (!boincInstalled()) {
        NICER_SKIP(kNoBoinc);
    }
    const auto dir = fs::temp_directory_path() / ("nicer-it-boinc-clock-" + std::to_string(::getpid()));
    std::optional<BusyDesktop> desktop;
    const auto run = runTightTask(
        dir, {}, [&] { desktop.emplace(); }, [&] { desktop.reset(); });
    checkKept(run);
    fs::remove_all(dir);
}

TEST_CASE("a BOINC task with a tight bound, held under the temperature rule's long cap, is never aborted for "
          "its elapsed time, since nicer keeps BOINC's clock",
          "[nicerd][boinc][boinc-clock]") {
    if (!boincInstalled()) {
        NICER_SKIP(kNoBoinc);
    }
    const auto dir = fs::temp_directory_path() / ("nicer-it-boinc-clock-heat-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    {
        // 40 °C + 60 °C x the work's share: a 52 °C target allows 20% of the machine, 0.4 of a CPU on two.
        test::ModelSensor sensor(dir / "sensor", test::kThermalModel);
        const auto run = runTightTask(
            dir / "run", {"--temperature-sensor", sensor.input().string(), "--temperature-target", "52"},
            [] {},
            [] {
                // Past the bound: a target the emulated sensor never reaches lets the task finish at speed.
                const auto set = test::runCommand(test::kNicer + " set temperature-target=100");
                INFO(set.err);
                CHECK(set.exitCode == 0);
            });
        checkKept(run);
    }
    fs::remove_all(dir); // once the sensor's thread has stopped writing into it
}

TEST_CASE("with BOINC's clock left to BOINC (nicer's behaviour before), the same task under the busy desktop "
          "is aborted for its elapsed time",
          "[.][boinc-clock-off][busy-desktop]") {
    if (!boincInstalled()) {
        NICER_SKIP(kNoBoinc);
    }
    const auto dir = fs::temp_directory_path() / ("nicer-it-boinc-clock-off-" + std::to_string(::getpid()));
    std::optional<BusyDesktop> desktop;
    const auto run = runTightTask(dir, {"--boinc-clock", "0"}, [&] { desktop.emplace(); });
    INFO(run.figures());
    REQUIRE(run.finished);
    CHECK(run.aborted());
    CHECK(run.maxElapsed > 0.9 * run.limit);
    fs::remove_all(dir);
}
