// nicerd with the REAL BOINC client (Debian's boinc-client 7.20.5) against a local BOINC project on loopback
// (tests/boinc/project): attach through nicerd, the scheduler RPC, the download, the task running in nicer's
// slice under its quota, the upload and the report; the preferences override that keeps BOINC from
// suspending itself while the user's programs are busy, and the volunteer's own override put back when the
// workload changes. Covers the hybrid machines' path (the private user manager, cpu controller on v1).
#include "CpuMeter.h"
#include "LocalBoincProject.h"
#include "NicerSlice.h"
#include "NicerdProcess.h"
#include "Poll.h"
#include "Skip.h"
#include "boinc/ClientDirectory.h"
#include "boinc/GlobalPrefsOverride.h"
#include "cli/RunCommand.h"
#include "dbus/client/DaemonClient.h"
#include "kernel/CgroupLayout.h"
#include "usermanager/SystemdUnitManager.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nicer;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

/// The volunteer's own override: BOINC's defaults that fight nicer (suspend above 25% non-BOINC CPU, a
/// 50% duty cycle), plus the limits the test machine's small disk needs.
const std::string kVolunteerOverride = "<global_preferences>\n"
                                       "   <suspend_cpu_usage>25</suspend_cpu_usage>\n"
                                       "   <cpu_usage_limit>50</cpu_usage_limit>\n"
                                       "   <run_if_user_active>0</run_if_user_active>\n"
                                       "   <disk_max_used_gb>0</disk_max_used_gb>\n"
                                       "   <disk_max_used_pct>100</disk_max_used_pct>\n"
                                       "   <disk_min_free_gb>0.1</disk_min_free_gb>\n"
                                       "   <work_buf_min_days>0.01</work_buf_min_days>\n"
                                       "   <max_bytes_sec_down>500000</max_bytes_sec_down>\n"
                                       "</global_preferences>\n";

const api::BoincTask* findTask(const api::BoincStatus& boinc) {
    return boinc.tasks.empty() ? nullptr : &boinc.tasks.front();
}

} // namespace

TEST_CASE(
    "nicerd runs a real BOINC task to its report: never suspended by BOINC while the user is busy, held "
    "by nicer's quota in nicer's slice, the volunteer's preferences back afterwards",
    "[nicerd][boinc]") {
    if (::access("/usr/bin/boinc", X_OK) != 0) {
        NICER_SKIP("Debian's boinc-client is not installed (/usr/bin/boinc)");
    }
    const auto dir = fs::temp_directory_path() / ("nicer-it-boinc-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    // The local project: one work unit whose app computes for 60 CPU seconds, so that it is still running
    // when the user's program has been busy for 30 s.
    const test::LocalBoincProject project(dir, {"--workunits", "1", "--task-seconds", "60"}, 60);
    const auto& url = project.url();
    const auto boincDir = project.boincDir();
    INFO("project " << url << ", server log " << project.log());
    // The volunteer's override in place of the one the helper writes.
    std::ofstream(boincDir / boinc::kOverrideFile) << kVolunteerOverride;

    // One task at a time while you're here (nicer cannot tell here: the profile for while you're here).
    test::NicerdProcess daemon({"--period", "0.5", "--workload-preset", "boinc", "--max-instances", "1"},
                               dir);
    REQUIRE(daemon.waitReady());
    INFO(daemon.log());
    REQUIRE(test::pollUntil([] { return test::boincStatus().boinc.state == api::BoincState::Running; }, 60s,
                            250ms));
    CHECK(test::pollUntil([] { return test::boincStatus().boinc.overrideApplied; }, 30s, 250ms));
    // nicer's transfer limits never go above the volunteer's own (500 kB/s down).
    CHECK(test::pollUntil([] { return test::boincStatus().boinc.maxDownRate > 0; }, 30s, 250ms));
    CHECK(test::boincStatus().boinc.maxDownRate <= 500000);
    // The volunteer's is kept aside, nicer's is in force, and theirs shows through where nicer sets nothing.
    CHECK(test::readFile(boincDir / boinc::kSavedOverrideFile) == kVolunteerOverride);
    CHECK_THAT(test::readFile(boincDir / boinc::kOverrideFile),
               Catch::Contains("<suspend_cpu_usage>0</suspend_cpu_usage>") &&
                   Catch::Contains("<disk_min_free_gb>0.1</disk_min_free_gb>"));
    // The profile's one instance is one of BOINC's CPUs, in the override the client reads.
    const double oneCpu = boinc::maxNcpusPctFor(1, static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)));
    CHECK(test::pollUntil(
        [&] { return boinc::hasNicerSettings(test::readFile(boincDir / boinc::kOverrideFile), oneCpu); }, 30s,
        250ms));

    auto client = dbus::DaemonClient::connect();
    REQUIRE(client.ok());
    const auto attached = client->boincAttach(url, test::kBoincAuthenticator);
    REQUIRE(attached.ok());

    double seenFraction = 0.0;
    bool cliListedTask = false;
    const auto watch = [&] {
        const auto s = test::boincStatus();
        if (const auto* task = findTask(s.boinc)) {
            seenFraction = std::max(seenFraction, task->fractionDone);
        }
        const auto cli = test::runCommand(std::string(NICER_CLI) + " boinc --json");
        if (cli.exitCode == 0) {
            const auto json = nlohmann::json::parse(cli.out);
            for (const auto& task : json["tasks"]) {
                cliListedTask = cliListedTask || task["fraction_done"].get<double>() > 0;
            }
        }
        return s;
    };

    // The task runs, in nicer's slice.
    REQUIRE(test::pollUntil(
        [&] {
            const auto s = watch();
            const auto* task = findTask(s.boinc);
            return task && task->state == nicer::api::BoincTaskState::Running && !test::appPids().empty();
        },
        120s, 500ms));
    const auto inSlice = test::slicePids();
    for (const pid_t app : test::appPids()) {
        CAPTURE(app);
        CHECK(std::find(inSlice.begin(), inSlice.end(), app) != inSlice.end());
    }

    {
        // The user's program keeps one of the CPUs busy: far above BOINC's 25% threshold, for longer than
        // BOINC's 10 s window and 20 s hold. BOINC's own rule would suspend the task; with nicer's override
        // it keeps running on the spare CPU, and nicer's quota is what holds it to that.
        const pid_t hog = ::fork();
        if (hog == 0) {
            volatile unsigned long spin = 0;
            for (;;) {
                spin = spin + 1;
            }
        }
        // The shares over the whole window, measured from /proc while nicerd is polled once a second.
        auto taskShare =
            std::async(std::launch::async, [] { return test::machineShare(test::appPids, 30s); });
        auto hogShare = std::async(std::launch::async, [hog] {
            return test::machineShare([hog] { return std::vector<pid_t>{hog}; }, 30s);
        });
        int polls = 0, suspended = 0, running = 0, held = 0;
        double quotaSum = 0.0;
        while (taskShare.wait_for(1s) != std::future_status::ready) {
            const auto s = watch();
            ++polls;
            suspended += s.boinc.state == api::BoincState::Suspended;
            running += s.boinc.state == api::BoincState::Running;
            held +=
                s.boinc.state == api::BoincState::Held; // nicer's controller stopped the work for a moment
            quotaSum += s.quota;
        }
        const double task = taskShare.get(), user = hogShare.get(), quota = quotaSum / polls;
        ::kill(hog, SIGKILL);
        ::waitpid(hog, nullptr, 0);
        WARN("one CPU of 2 busy for 30 s: BOINC running in "
             << running << " of " << polls << " polls, held by nicer in " << held
             << ", suspended by itself in " << suspended << "; mean quota " << quota << ", the task's share "
             << task << ", the user's program's share " << user);
        CHECK(suspended == 0);
        CHECK(running + held == polls); // never an error: the client answers whenever it is not frozen
        // How much the task gets depends on what else the machine runs (idle time is the controller's
        // input); that it was running, unsuspended, with the user's program busy, does not.
        CHECK(running > 0);
        CHECK(user > 0.35);        // the user's program keeps its CPU
        CHECK(task < quota + 0.1); // the task has no more than nicer's quota gives it
    }

    // Without the foreground the task gets the machine, finishes, uploads and is reported.
    const auto reported = [&] {
        watch();
        return !project.reported().empty();
    };
    CHECK(test::pollUntil(reported, 180s, 1000ms));
    CHECK(seenFraction > 0.0);
    CHECK(cliListedTask);
    const auto results = project.reported();
    CHECK(std::ranges::any_of(results, [](const auto& result) { return result["outcome"] == "success"; }));

    // Switching away: BOINC stops and gets the volunteer's own override back, byte for byte.
    const auto switched = test::runCommand(std::string(NICER_CLI) + " workload demo");
    CHECK(switched.exitCode == 0);
    CHECK(test::boincStatus().boinc.state == api::BoincState::Off);
    CHECK(test::readFile(boincDir / boinc::kOverrideFile) == kVolunteerOverride);
    CHECK_FALSE(fs::exists(boincDir / boinc::kSavedOverrideFile));
    CHECK(daemon.stop() == 0);
    fs::remove_all(dir);
}
