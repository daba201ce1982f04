// Faults injected into a real nicerd under a real systemd user manager, each repeated at random moments and
// counted: kill -9 while the foreground is busy, the user manager re-executing, the session bus restarting,
// the wall clock jumping, the work crashing in a loop. docs/reliability.md lists them with their figures.
// NICER_FAULT_REPEAT=N runs each loop N times instead of its default (e.g. 500 by hand). The random seed is
// printed, and NICER_FAULT_SEED=S repeats a run.
#include "CpuMeter.h"
#include "NicerSlice.h"
#include "NicerdProcess.h"
#include "Poll.h"
#include "cli/RunCommand.h"
#include "dbus/client/DaemonClient.h"
#include "kernel/CgroupLayout.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <signal.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace nicer;
using namespace std::chrono_literals;
using test::freshStateDir;
using test::NicerdProcess;

namespace {

// A bound on a stuck state, never a claim on speed.
constexpr auto kWait = 60s;

int repeatCount(int defaultCount) {
    const char* n = std::getenv("NICER_FAULT_REPEAT");
    return n && std::atoi(n) > 0 ? std::atoi(n) : defaultCount;
}

std::mt19937 seededRandom() {
    const char* s = std::getenv("NICER_FAULT_SEED");
    const auto seed = s ? static_cast<unsigned>(std::strtoul(s, nullptr, 10)) : std::random_device{}();
    WARN("NICER_FAULT_SEED=" << seed);
    return std::mt19937(seed);
}

/// A pause of a random length in [0, @p most).
void randomPause(std::mt19937& random, std::chrono::milliseconds most) {
    std::uniform_int_distribution<long> ms(0, most.count() - 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms(random)));
}

std::string nicerCli(const std::string& args) {
    return std::string(NICER_CLI) + " " + args;
}

bool allGone(const std::vector<pid_t>& pids) {
    return std::all_of(pids.begin(), pids.end(), [](pid_t p) { return ::kill(p, 0) != 0; });
}

/// nicerd answers on the bus, reports no error, and its quota is the one in the kernel (with quota 0 the
/// work is frozen instead, and the kernel keeps the last cap).
/// @p capped says whether the kernel's cap was compared (quota above 0).
bool underControl(const kernel::CgroupLayout& layout, bool& capped) {
    capped = false;
    const auto s = test::tryDaemonStatus();
    if (!s || !s->lastError.empty()) {
        return false;
    }
    if (s->quota <= 0.0) {
        return true;
    }
    capped = true;
    auto cgroup = test::units().controlGroup(test::kSlice);
    if (!cgroup) {
        return false;
    }
    const auto kernel = layout.readCpuQuotaPerSecUSec(*cgroup);
    const double expected = std::max(10000.0, s->quota * s->cpuCount * 1e6);
    // The quota may have moved by a period between the two reads: within 10% of the machine.
    return kernel && std::abs(static_cast<double>(*kernel) - expected) <= 0.1 * s->cpuCount * 1e6;
}

struct Spread {
    double min = 1e300, max = 0, sum = 0;
    int n = 0;
    void add(double v) {
        min = std::min(min, v);
        max = std::max(max, v);
        sum += v;
        ++n;
    }
    double mean() const { return n ? sum / n : 0.0; }
};

} // namespace

TEST_CASE("fault: kill -9 of nicerd at random moments while the foreground is busy", "[faults][failsafe]") {
    const int runs = repeatCount(30);
    auto random = seededRandom();
    test::ForegroundHog hog;
    const double cpus = static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN));
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    int stopped = 0;
    int held = 0;
    Spread stopSeconds;
    Spread cpuAfterKill;
    Spread shareOverQuota;
    for (int run = 0; run < runs; ++run) {
        // Every fourth run kills it while the work is held (paused): the freezers must not leave it stuck.
        const bool paused = run % 4 == 3;
        NicerdProcess daemon({"--period", "0.25", "--instances", "2"}, freshStateDir("kill9"));
        REQUIRE(daemon.waitReady());
        std::vector<pid_t> pids;
        REQUIRE(test::pollUntil([&] { return (pids = test::slicePids()).size() >= 2; }, kWait));
        if (paused) {
            REQUIRE(test::runCommand(nicerCli("pause")).exitCode == 0);
            ++held;
        }
        randomPause(random, 1500ms);
        const auto before = test::tryDaemonStatus();
        REQUIRE(before);
        pids = test::slicePids();
        std::map<pid_t, long long> atKill;
        for (const pid_t p : pids) {
            atKill[p] = test::processCpuTicks(p);
        }
        const auto killed = std::chrono::steady_clock::now();
        daemon.kill9();
        // Until every process of the work is gone, the CPU each one used since the kill.
        std::map<pid_t, long long> last = atKill;
        const bool gone = test::pollUntil(
            [&] {
                for (auto& [pid, ticks] : last) {
                    ticks = std::max(ticks, test::processCpuTicks(pid));
                }
                return allGone(pids);
            },
            kWait, 10ms);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
        INFO("run " << run << (paused ? " (paused)" : "") << ": " << pids.size() << " processes, " << seconds
                    << " s");
        CHECK(gone);
        stopped += gone;
        double used = 0;
        for (const auto& [pid, ticks] : last) {
            used += static_cast<double>(std::max(0LL, ticks - atKill[pid])) / tick;
        }
        stopSeconds.add(seconds);
        cpuAfterKill.add(used);
        // The cap nicerd last applied stays in the kernel until systemd has stopped the work: the work gets
        // no more than that (one clock tick per process of slack: /proc counts in ticks).
        const double allowed = (paused ? 0.0 : before->quota) * cpus * seconds + pids.size() / tick;
        CHECK(used <= allowed + 0.02);
        shareOverQuota.add(used - allowed);
    }
    WARN("kill -9: " << stopped << " of " << runs << " runs (" << held
                     << " while paused) ended with the work stopped; time from the kill to the last "
                        "process gone: mean "
                     << stopSeconds.mean() << " s, max " << stopSeconds.max << " s; the work's CPU after the "
                     << "kill: mean " << cpuAfterKill.mean() << " s, max " << cpuAfterKill.max
                     << " s (max over its cap " << shareOverQuota.max << " s)");
    CHECK(stopped == runs);
    CHECK(test::units().activeState("nicer-work-1.service").value() ==
          nicer::usermanager::UnitState::Inactive);
}

namespace {

/// What a fault repeated under a running nicerd left: how often it came back under control, and how often
/// with a cap in force (quota above 0, compared with the kernel's).
struct Recovery {
    int runs = 0;
    int recovered = 0;
    int capped = 0;
};

/// A nicerd whose work (stress-ng) shares the machine with one busy CPU of the user's, so that it has a
/// quota to keep, not only a freeze; @p fault runs at random moments, each time followed by a wait until
/// nicerd answers with no error and its quota in the kernel.
Recovery repeatUnderNicerd(NicerdProcess& daemon, const std::vector<std::string>& fault, int runs) {
    auto random = seededRandom();
    const auto layout = kernel::CgroupLayout::detect();
    REQUIRE(layout.ok());
    Recovery r{runs, 0, 0};
    for (int run = 0; run < runs; ++run) {
        randomPause(random, 1000ms);
        for (const auto& command : fault) {
            const auto done = test::runCommand(command);
            INFO(command << ": " << done.err);
            REQUIRE(done.exitCode == 0);
        }
        bool capped = false;
        const bool back = test::pollUntil([&] { return underControl(*layout, capped); }, kWait, 100ms);
        r.capped += back && capped;
        INFO("run " << run << ": " << daemon.log());
        CHECK(back);
        r.recovered += back;
        CHECK_FALSE(daemon.exited());
    }
    return r;
}

const std::vector<std::string> kBusyWork{"--period", "0.25", "--", "stress-ng", "--cpu", "1", "--quiet"};

} // namespace

TEST_CASE("fault: the user manager re-executes under nicerd at random moments", "[faults]") {
    test::ForegroundHog hog(1);
    NicerdProcess daemon(kBusyWork, freshStateDir("reexec"));
    REQUIRE(daemon.waitReady());
    std::vector<pid_t> before;
    REQUIRE(test::pollUntil([&] { return (before = test::slicePids()).size() >= 2; }, kWait));
    const auto r = repeatUnderNicerd(daemon, {"systemctl --user daemon-reexec"}, repeatCount(15));
    // Every process of the work before is still there (stress-ng may have forked its workers since): a
    // re-executing manager keeps its units, and nicerd restarted nothing.
    auto after = test::slicePids();
    std::sort(before.begin(), before.end());
    std::sort(after.begin(), after.end());
    CHECK(std::includes(after.begin(), after.end(), before.begin(), before.end()));
    WARN("daemon-reexec: nicerd kept the work under control after " << r.recovered << " of " << r.runs << " ("
                                                                    << r.capped << " with a cap in force)");
    CHECK(r.recovered == r.runs);
    CHECK(daemon.stop() == 0);
}

TEST_CASE("fault: the session bus restarts under nicerd at random moments", "[faults][dbus]") {
    test::ForegroundHog hog(1);
    NicerdProcess daemon(kBusyWork, freshStateDir("bus"));
    REQUIRE(daemon.waitReady());
    // The way a desktop restarts its bus; dbus.socket keeps the address and starts a new dbus-daemon.
    // (reset-failed first: systemd's start limit, 5 starts in 10 s, is not what this test is about.)
    const auto r = repeatUnderNicerd(
        daemon, {"systemctl --user reset-failed dbus.service", "systemctl --user restart dbus.service"},
        repeatCount(15));
    WARN("session bus restarts: nicerd came back on the bus with the work under control after "
         << r.recovered << " of " << r.runs << " (" << r.capped << " with a cap in force)");
    CHECK(r.recovered == r.runs);
    // Still the whole service: pause and resume reach the work through the new connections.
    REQUIRE(test::runCommand(nicerCli("pause")).exitCode == 0);
    CHECK(test::pollUntil([] { return test::machineShare(test::slicePids, 300ms) < 0.02; }, kWait));
    REQUIRE(test::runCommand(nicerCli("resume")).exitCode == 0);
    CHECK(daemon.stop() == 0);
}

TEST_CASE("fault: the wall clock jumps back and forth under nicerd", "[faults]") {
    // A shim moves nicerd's wall clock (CLOCK_REALTIME) only, as a clock step does; its period timer runs
    // on the monotonic clock and must not notice.
    const int jumps = repeatCount(40);
    auto random = seededRandom();
    const auto dir = freshStateDir("clock");
    const auto offsetFile = dir / "wallclock-offset";
    std::ofstream(offsetFile) << "0\n";
    NicerdProcess daemon(
        {"--period", "0.25", "--instances", "1"}, dir,
        {{"LD_PRELOAD", NICER_WALLCLOCK_SHIFT}, {"NICER_WALLCLOCK_OFFSET_FILE", offsetFile.string()}});
    REQUIRE(daemon.waitReady());
    const auto historySize = [] {
        auto client = dbus::DaemonClient::connect();
        REQUIRE(client.ok());
        auto history = client->history();
        REQUIRE(history.ok());
        return *history;
    };
    const auto start = std::chrono::steady_clock::now();
    const std::size_t samplesBefore = historySize().size();
    // A day ahead, an hour back, a year ahead, a month back, none, ten seconds back.
    const std::vector<long long> offsets{86400, -3600, 365 * 86400, -30 * 86400, 0, -10};
    for (int jump = 0; jump < jumps; ++jump) {
        std::ofstream(offsetFile) << offsets[random() % offsets.size()] << '\n';
        randomPause(random, 500ms);
    }
    const auto history = historySize();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The samples' own stamps show the jumps (the fault really reached nicerd)...
    int backwards = 0;
    for (std::size_t i = 1; i < history.size(); ++i) {
        backwards += history[i].timeUSec < history[i - 1].timeUSec;
    }
    // ...while the loop kept its period: a wall-clock timer would have stalled for hours or fired in a burst.
    const double ticks = static_cast<double>(history.size() - samplesBefore);
    const double expected = seconds / 0.25;
    WARN("wall clock: " << jumps << " jumps in " << seconds << " s; " << ticks << " periods run (" << expected
                        << " expected), samples stamped back in time " << backwards << " times");
    CHECK(backwards > 0);
    CHECK(ticks > 0.5 * expected);
    CHECK(ticks < 2.0 * expected);
    CHECK(daemon.stop() == 0);
}

TEST_CASE("fault: work that crashes in a loop is restarted with a growing wait, nicerd stays up",
          "[faults][workload]") {
    const auto dir = freshStateDir("crash");
    const auto starts = dir / "starts";
    // Each start leaves a line, then the work crashes (SIGSEGV) at once.
    NicerdProcess daemon({"--period", "0.25", "--instances", "1", "--", "sh", "-c",
                          "echo started >> " + starts.string() + " && kill -SEGV $$"},
                         dir);
    REQUIRE(daemon.waitReady());
    const auto countStarts = [&] {
        std::ifstream in(starts);
        return static_cast<int>(std::count(std::istreambuf_iterator<char>(in), {}, '\n'));
    };
    // The waits double from 1 s: 1, 2, 4, 8 s. Up to the fifth start the test waits; the time that took
    // shows the waits grew (a loop without a wait would have made hundreds of starts by then).
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(test::pollUntil([&] { return countStarts() >= 5; }, kWait));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int made = countStarts();
    const auto s = test::tryDaemonStatus();
    REQUIRE(s);
    WARN("crash loop: " << made << " starts in " << seconds << " s; nicerd says: " << s->lastError);
    CHECK(seconds >= 1 + 2 + 4);
    CHECK(made <= 6);
    CHECK_FALSE(daemon.exited());
    CHECK(daemon.stop() == 0);
}
