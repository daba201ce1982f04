// BOINC's clock under nicer (core/daemon/BoincClock.h) with the REAL BOINC client (Debian's 7.20.5) and the
// local test project, whose work unit has a tight bound (--bound-factor 2: a 61 CPU-second task that BOINC
// aborts at 122 s of elapsed time, exit status 197, as a project sets it). BOINC counts a running task's
// elapsed time by the wall clock; nicerd stops the client (never its tasks) in spans BOINC does not count
// whenever that clock runs ahead of the task's CPU time. Each case holds the task at a low share for longer
// than its bound in wall time, and the task must still finish and be reported a success:
// - a foreground outside the work (busy 70% of every CPU) and nicer's controller;
// - the temperature rule's long cap (an emulated sensor that follows the work, its target allowing 20% of
//   the machine).
// The same run with the clock left to BOINC (--boinc-clock 0, nicer's behaviour before) is aborted; that
// case is hidden ([.]) and run by hand for the record, as it only shows BOINC's own rule:
//   nicer_boinc_integration_tests '[boinc-clock-off]'
// Covers the hybrid machines' path (the private user manager, cpu controller on v1).
#include "LocalBoincProject.h"
#include "ModelSensor.h"
#include "NicerdProcess.h"
#include "Poll.h"
#include "Skip.h"
#include "cli/RunCommand.h"

#include <catch2/catch.hpp>

#include <ctime>
#include <filesystem>
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

/// The user's own programs, outside the work: one on every CPU, each busy 7 ms of every 10 ms, so that the
/// work gets a sustained low share (what nicer's controller leaves it of the rest). They die with the test.
class BusyDesktop {
public:
    BusyDesktop() {
        for (long i = 0; i < ::sysconf(_SC_NPROCESSORS_ONLN); ++i) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                ::prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;) {
                    const auto until = std::chrono::steady_clock::now() + 7ms;
                    while (std::chrono::steady_clock::now() < until) {
                    }
                    const timespec rest{0, 3'000'000};
                    ::nanosleep(&rest, nullptr);
                }
            }
            m_pids.push_back(pid);
        }
    }
    ~BusyDesktop() {
        for (const pid_t p : m_pids) {
            ::kill(p, SIGKILL);
            ::waitpid(p, nullptr, 0);
        }
    }
    BusyDesktop(const BusyDesktop&) = delete;
    BusyDesktop& operator=(const BusyDesktop&) = delete;

private:
    std::vector<pid_t> m_pids;
};

/// What one run of the tight task showed.
struct TightRun {
    bool finished = false;   ///< reported, or aborted by the client
    nlohmann::json result;   ///< the reported result (the project's state file), if any
    double wall = 0.0;       ///< wall seconds from the task's start to its end (or abort)
    double limit = 0.0;      ///< the elapsed-time limit nicerd showed (elapsed_limit_s)
    double maxElapsed = 0.0; ///< the largest elapsed time nicerd showed
    double cpuAtEnd = 0.0;   ///< the task's CPU seconds last shown
    std::string clock;       ///< a non-empty BoincClock seen while it ran
    bool abortedByClient = false;

    std::string figures() const {
        std::ostringstream out;
        out << "the task ran " << wall << " s of wall time for " << cpuAtEnd << " s of CPU; BOINC's elapsed "
            << "time at most " << maxElapsed << " s of its " << limit << " s limit; outcome "
            << (result.is_null() ? "none" : result.dump()) << "; clock \"" << clock << "\"";
        return out.str();
    }
};

/**
 * Runs nicerd (@p nicerdArgs, the boinc preset) with a client attached to a project of one tight work unit,
 * and follows the task until it is reported or aborted: every second nicerd's state on the bus. @p
 * whileRunning is called once the task runs (to start the foreground).
 */
TightRun runTightTask(const fs::path& dir, std::vector<std::string> nicerdArgs,
                      const std::function<void()>& whileRunning) {
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
    REQUIRE(test::pollUntil([] { return test::boincStatus().boinc.state == "running"; }, 60s, 250ms));
    auto client = dbus::DaemonClient::connect();
    REQUIRE(client.ok());
    REQUIRE(client->boincAttach(project.url(), test::kBoincAuthenticator).ok());

    TightRun run;
    std::optional<std::chrono::steady_clock::time_point> started;
    bool loaded = false;
    const auto follow = [&] {
        const auto s = test::boincStatus();
        if (s.boinc.tasks.empty()) {
            return false;
        }
        const auto& task = s.boinc.tasks.front();
        if (task.state == "running" && !started) {
            started = std::chrono::steady_clock::now();
        }
        if (started && !loaded) {
            loaded = true;
            whileRunning();
        }
        if (task.state == "running" || task.state == "suspended") {
            run.maxElapsed = std::max(run.maxElapsed, task.elapsedSeconds);
            run.cpuAtEnd = task.cpuSeconds;
            run.limit = std::max(run.limit, task.elapsedLimitSeconds);
        }
        if (!s.boinc.clock.empty()) {
            run.clock = s.boinc.clock;
        }
        if (started && task.state != "running" && task.state != "suspended" && task.state != "ready" &&
            run.wall == 0.0) {
            run.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - *started).count();
            run.abortedByClient = task.state == "error";
        }
        const auto reported = project.reported();
        if (!reported.empty()) {
            run.result = reported.front();
        }
        return !reported.empty() || run.abortedByClient;
    };
    run.finished = test::pollUntil(follow, 900s, 1000ms);
    std::cout << "measured: " << run.figures() << '\n';
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
    CHECK_FALSE(run.abortedByClient);
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

TEST_CASE("a BOINC task with a tight bound, held at a low share by a busy desktop outside the work, is never "
          "aborted for its elapsed time: nicer keeps BOINC's clock",
          "[nicerd][boinc][boinc-clock]") {
    if (!boincInstalled()) {
        NICER_SKIP(kNoBoinc);
    }
    const auto dir = fs::temp_directory_path() / ("nicer-it-boinc-clock-" + std::to_string(::getpid()));
    std::optional<BusyDesktop> desktop;
    const auto run = runTightTask(dir, {}, [&] { desktop.emplace(); });
    checkKept(run);
    fs::remove_all(dir);
}

TEST_CASE("a BOINC task with a tight bound, held under the temperature rule's long cap, is never aborted for "
          "its elapsed time: nicer keeps BOINC's clock",
          "[nicerd][boinc][boinc-clock]") {
    if (!boincInstalled()) {
        NICER_SKIP(kNoBoinc);
    }
    const auto dir = fs::temp_directory_path() / ("nicer-it-boinc-clock-heat-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    // 40 °C + 60 °C x the work's share: a 52 °C target allows 20% of the machine, 0.4 of a CPU on two.
    test::ModelSensor sensor(dir / "sensor", test::kThermalModel);
    const auto run = runTightTask(
        dir / "run", {"--temperature-sensor", sensor.input().string(), "--temperature-target", "52"}, [] {});
    checkKept(run);
    fs::remove_all(dir);
}

TEST_CASE("with BOINC's clock left to BOINC (nicer's behaviour before), the same task under the busy desktop "
          "is aborted for its elapsed time",
          "[.][boinc-clock-off]") {
    if (!boincInstalled()) {
        NICER_SKIP(kNoBoinc);
    }
    const auto dir = fs::temp_directory_path() / ("nicer-it-boinc-clock-off-" + std::to_string(::getpid()));
    std::optional<BusyDesktop> desktop;
    const auto run = runTightTask(dir, {"--boinc-clock", "0"}, [&] { desktop.emplace(); });
    INFO(run.figures());
    REQUIRE(run.finished);
    CHECK(run.abortedByClient);
    CHECK(run.maxElapsed > 0.9 * run.limit);
    fs::remove_all(dir);
}
