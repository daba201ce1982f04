// Here or away through the real nicerd on the real user manager: a real X server (Xvfb) given input through
// XTest makes nicerd's presence "here" and no input for the away delay "away"; a lock that logind (a double
// on a private system bus) says is away at once. Each switches the profile in force (its largest share, its
// memory share on the slice's MemoryHigh, and how many instances run: the others frozen) within a period,
// shown in the bus's state that `nicer status
// --json` prints. The sleep policy holds logind's sleep inhibitor while the work runs on mains (a real
// upowerd over an emulated battery). Which cgroup path: the hybrid machines' user slice; presence does not
// depend on the placement.
#include "EventLoop.h"
#include "IdleMachineStat.h"
#include "NicerdProcess.h"
#include "Poll.h"
#include "Skip.h"
#include "cli/RunCommand.h"
#include "dbus/client/DaemonClient.h"
#include "desktop/FakeLaptop.h"
#include "kernel/MemInfo.h"
#include "libsystemd/RestartableBus.h"
#include "presence/FakeLogind.h"
#include "presence/Xvfb.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

using namespace nicer;
using namespace std::chrono_literals;
using control::Presence;

namespace {

/// logind's double on its own bus (or on @p systemBus) and loop, in a thread of its own, as the real one runs
/// beside nicerd.
class LogindThread {
public:
    explicit LogindThread(std::string systemBus = {})
        : m_address(systemBus.empty() ? m_bus.address() : std::move(systemBus)) {
        m_thread = std::thread([this] {
            auto loop = test::newLoop();
            test::FakeLogind logind(loop.get(), m_address, ::getuid());
            m_logind = &logind;
            m_ready = true;
            while (!m_stop) {
                sd_event_run(loop.get(), 20'000);
                if (m_lock.exchange(-1) >= 0) {
                    logind.setLockedHint(m_locked);
                }
                m_idle = logind.idleHint();
                const auto held = logind.inhibitors();
                const std::lock_guard lock(m_mutex);
                m_inhibitors = held;
            }
        });
        REQUIRE(test::pollUntil([&] { return m_ready.load(); }, 10s, 10ms));
    }
    ~LogindThread() {
        m_stop = true;
        m_thread.join();
    }
    const std::string& address() const { return m_address; }
    /// As `loginctl lock-session` makes logind say.
    void setLocked(bool locked) {
        m_locked = locked;
        m_lock = 1;
    }
    /// The display session's IdleHint as logind has it now.
    bool idle() const { return m_idle; }
    /// The inhibitors held now, as `systemd-inhibit --list` shows them.
    std::vector<test::FakeLogind::Inhibitor> inhibitors() const {
        const std::lock_guard lock(m_mutex);
        return m_inhibitors;
    }

private:
    test::RestartableBus m_bus;
    std::string m_address;
    std::thread m_thread;
    test::FakeLogind* m_logind = nullptr;
    std::atomic<bool> m_ready{false};
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_locked{false};
    std::atomic<bool> m_idle{false};
    std::atomic<int> m_lock{-1};
    mutable std::mutex m_mutex;
    std::vector<test::FakeLogind::Inhibitor> m_inhibitors;
};

/// A shared-memory object of the test's own for publish-input-time, read as BOINC's client reads
/// /idle_detect_shmem (client/hostinfo_unix.cpp: the update at most 60 s old, then now less the last input).
struct InputTimeObject {
    std::string name = "/nicer-test-input-time-" + std::to_string(::getpid());
    InputTimeObject() = default;
    InputTimeObject(const InputTimeObject&) = delete;
    InputTimeObject& operator=(const InputTimeObject&) = delete;
    ~InputTimeObject() { ::shm_unlink(name.c_str()); }

    std::optional<std::int64_t> boincIdleSeconds() const {
        const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
        if (fd < 0) {
            return std::nullopt;
        }
        std::int64_t values[2] = {0, 0};
        const bool read = ::pread(fd, values, sizeof values, 0) == static_cast<ssize_t>(sizeof values);
        ::close(fd);
        const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        if (!read || values[0] > now + 10 || values[0] < now - 60) {
            return std::nullopt;
        }
        return now - values[1];
    }
};

/// Whether a unit of the work is held: frozen, as the user manager says (FreezerState, pure cgroup v2), or
/// its main process stopped (SIGSTOP, where the manager cannot freeze a unit: a hybrid cgroup tree).
bool held(const std::string& unit) {
    const auto property = [&unit](const char* name) {
        const auto shown =
            test::runCommand(std::string("systemctl --user show --value -p ") + name + " " + unit);
        REQUIRE(shown.exitCode == 0);
        return shown.out.substr(0, shown.out.find('\n'));
    };
    if (property("FreezerState") == "frozen") {
        return true;
    }
    const std::string pid = property("MainPID");
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    const auto end = text.rfind(')'); // the name may hold spaces and parentheses
    return end != std::string::npos && end + 2 < text.size() && text[end + 2] == 'T';
}

/// The slice's MemoryHigh as the user manager has it, in bytes.
std::uint64_t sliceMemoryHigh() {
    const auto shown = test::runCommand("systemctl --user show -p MemoryHigh --value nicer.slice");
    REQUIRE(shown.exitCode == 0);
    return std::stoull(shown.out);
}

} // namespace

TEST_CASE("input on the X server makes nicerd's profile here, and no input for the delay away") {
    const auto dir = test::freshStateDir("presence-x11");
    const InputTimeObject inputTime;
    test::Xvfb x;
    LogindThread logind;
    const test::IdleMachineStat stat(dir / "stat");
    x.input();
    test::NicerdProcess daemon(
        {"--period",
         "0.25",
         "--proc-stat",
         stat.path(),
         "--away-delay",
         "3",
         "--max-share",
         "0.25",
         "--away-max-share",
         "1",
         "--memory-share",
         "0.1",
         "--away-memory-share",
         "0.3",
         "--publish-input-time",
         "1",
         "--input-time-object",
         inputTime.name,
         "--instances",
         "2",
         "--max-instances",
         "1"},
        dir,
        {{"DISPLAY", x.display()}, {"WAYLAND_DISPLAY", ""}, {"DBUS_SYSTEM_BUS_ADDRESS", logind.address()}});
    REQUIRE(daemon.waitReady());
    // The memory shares of the two profiles, under the fence of memory-max (50%, MemoryHigh 45%).
    const auto total = kernel::machineMemoryBytes("/proc/meminfo");
    REQUIRE(total);
    const auto share = [&](double fraction) {
        return static_cast<std::uint64_t>(std::llround(static_cast<double>(*total) * fraction));
    };
    // Here: the here profile's largest share holds the work, and says so.
    REQUIRE(test::waitForStatus([&](const api::DaemonState& s) {
        return s.presence == Presence::Here && s.heldBy == "profile" && s.quota > 0.0 &&
               s.quota <= 0.25 + 1e-9 && s.memoryHigh == share(0.1);
    }));
    // MemoryHigh is written without waiting for the manager: in force a moment after the state says so.
    CHECK(test::pollUntil([&] { return sliceMemoryHigh() == share(0.1); }, 5s, 50ms));
    // One instance runs while you're here; the other is frozen, as the user manager says.
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.instancesRunning == 1; }));
    CHECK_FALSE(held("nicer-work-1.service"));
    CHECK(test::pollUntil([] { return held("nicer-work-2.service"); }, 5s, 50ms));
    auto now = test::tryDaemonStatus();
    REQUIRE(now);
    CHECK(now->presenceSource == "XScreenSaver on " + x.display());
    CHECK(now->presenceReason == "input within 3 s");
    CHECK_THAT(now->holdReason, Catch::Contains("at most 25% while you're here"));
    // The last input published for BOINC: a moment ago, as BOINC reads it.
    CHECK(now->inputTimeNote == "your last input published in /dev/shm" + inputTime.name + " for BOINC");
    REQUIRE(test::pollUntil([&] { return inputTime.boincIdleSeconds().has_value(); }, 10s, 50ms));
    CHECK(*inputTime.boincIdleSeconds() < 3);
    // No input for the delay: away, and the away profile lets the work have the idle machine and more of its
    // memory.
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.presence == Presence::Away; }));
    REQUIRE(test::waitForStatus([&](const api::DaemonState& s) {
        return s.quota > 0.5 && s.heldBy.empty() && s.memoryHigh == share(0.3);
    }));
    CHECK(test::pollUntil([&] { return sliceMemoryHigh() == share(0.3); }, 5s, 50ms));
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.instancesRunning == 2; }));
    CHECK(test::pollUntil([] { return !held("nicer-work-2.service"); }, 5s, 50ms));
    now = test::tryDaemonStatus();
    REQUIRE(now);
    CHECK(now->presenceReason == "no input for 3 s");
    // BOINC counts the same: no input for at least the delay.
    CHECK(inputTime.boincIdleSeconds().value_or(0) >= 3);
    // Input again: here, and the cap back within a period or two of the state saying so.
    x.input();
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.presence == Presence::Here; }));
    REQUIRE(test::waitForStatus(
        [&](const api::DaemonState& s) { return s.quota <= 0.25 + 1e-9 && s.memoryHigh == share(0.1); }));
    CHECK(test::pollUntil([&] { return sliceMemoryHigh() == share(0.1); }, 5s, 50ms));
    // A lock that logind tells is away at once, whatever the X server says.
    x.input();
    logind.setLocked(true);
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.presence == Presence::Away; }));
    now = test::tryDaemonStatus();
    REQUIRE(now);
    CHECK(now->presenceReason == "the screen is locked");
    CHECK(now->presenceSource == "logind (session 3)");
    logind.setLocked(false);
    x.input();
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.presence == Presence::Here; }));
    CHECK(daemon.stop() == 0);
}

TEST_CASE("without any source of the desktop nicerd says why, and keeps the profile for while you're here") {
    const auto dir = test::freshStateDir("presence-none");
    test::RestartableBus noLogind;
    const test::IdleMachineStat stat(dir / "stat");
    test::NicerdProcess daemon(
        {"--period", "0.25", "--proc-stat", stat.path(), "--max-share", "0.25", "--away-max-share", "1"}, dir,
        {{"DISPLAY", ""}, {"WAYLAND_DISPLAY", ""}, {"DBUS_SYSTEM_BUS_ADDRESS", noLogind.address()}});
    REQUIRE(daemon.waitReady());
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) {
        return s.presence == Presence::Unknown && s.heldBy == "profile" && s.quota > 0.0 &&
               s.quota <= 0.25 + 1e-9;
    }));
    const auto now = test::tryDaemonStatus();
    REQUIRE(now);
    CHECK_THAT(now->presenceReason, Catch::Contains("logind is not on the system bus"));
    CHECK_THAT(now->presenceReason, Catch::Contains("GNOME Shell's idle monitor"));
    CHECK(daemon.stop() == 0);
}

TEST_CASE("asked to, nicerd tells logind's idle hint what the X server says, and takes it back at its end") {
    const auto dir = test::freshStateDir("presence-tell-logind");
    test::Xvfb x;
    LogindThread logind;
    const test::IdleMachineStat stat(dir / "stat");
    x.input();
    {
        test::NicerdProcess daemon(
            {"--period", "0.25", "--proc-stat", stat.path(), "--away-delay", "3", "--logind-idle-hint", "1"},
            dir,
            {{"DISPLAY", x.display()},
             {"WAYLAND_DISPLAY", ""},
             {"DBUS_SYSTEM_BUS_ADDRESS", logind.address()}});
        REQUIRE(daemon.waitReady());
        REQUIRE(test::waitForStatus([](const api::DaemonState& s) {
            return s.presence == Presence::Here && s.presenceSource.starts_with("XScreenSaver");
        }));
        CHECK_FALSE(logind.idle());
        // No input for the delay: away, and logind's hint says idle within a period of nicerd's verdict.
        REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.presence == Presence::Away; }));
        REQUIRE(test::pollUntil([&] { return logind.idle(); }, 10s));
        auto now = test::tryDaemonStatus();
        REQUIRE(now);
        // nicerd's own verdict still comes from the X server, not from the hint it set.
        CHECK(now->presenceSource == "XScreenSaver on " + x.display());
        // Input: here, and the hint follows.
        x.input();
        REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.presence == Presence::Here; }));
        REQUIRE(test::pollUntil([&] { return !logind.idle(); }, 10s));
        // Away again, then nicerd ends: the hint it set is taken back.
        REQUIRE(test::pollUntil([&] { return logind.idle(); }, 20s));
        CHECK_THAT(daemon.log(), Catch::Contains("told logind that you are away (session 3's idle hint)"));
        CHECK(daemon.stop() == 0);
    }
    CHECK(test::pollUntil([&] { return !logind.idle(); }, 10s));
}

TEST_CASE("by default nicerd leaves logind's idle hint to the desktop") {
    const auto dir = test::freshStateDir("presence-no-tell");
    test::Xvfb x;
    LogindThread logind;
    const test::IdleMachineStat stat(dir / "stat");
    test::NicerdProcess daemon(
        {"--period", "0.25", "--proc-stat", stat.path(), "--away-delay", "1"}, dir,
        {{"DISPLAY", x.display()}, {"WAYLAND_DISPLAY", ""}, {"DBUS_SYSTEM_BUS_ADDRESS", logind.address()}});
    REQUIRE(daemon.waitReady());
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.presence == Presence::Away; }));
    // A few periods after the verdict: the hint is as the desktop (here: nobody) left it.
    auto client = dbus::DaemonClient::connect();
    REQUIRE(client);
    const auto periods = [&] {
        const auto history = client->history();
        return history ? history->size() : 0;
    };
    const auto atVerdict = periods();
    REQUIRE(test::pollUntil([&] { return periods() >= atVerdict + 4; }, 10s));
    CHECK_FALSE(logind.idle());
    CHECK_THAT(daemon.log(), !Catch::Contains("told logind"));
    CHECK(daemon.stop() == 0);
}

TEST_CASE("keep-awake holds logind's sleep inhibitor while the work runs on mains, and lets go on battery, "
          "on a pause and at nicerd's end") {
    test::PrivateSystemBus systemBus;
    test::FakeLaptop laptop(systemBus.address());
    if (!laptop.missing().empty()) {
        NICER_SKIP("the emulated battery needs " + laptop.missing());
    }
    LogindThread logind(systemBus.address());
    const auto dir = test::freshStateDir("presence-keep-awake");
    test::NicerdProcess daemon(
        {"--period", "0.25", "--resume-delay", "1", "--keep-awake", "1", "--power-supply-dir",
         laptop.powerSupplyDir().string()},
        dir, {{"DISPLAY", ""}, {"WAYLAND_DISPLAY", ""}, {"DBUS_SYSTEM_BUS_ADDRESS", systemBus.address()}});
    REQUIRE(daemon.waitReady());
    const auto awake = [](const api::DaemonState& s) {
        return s.keepingAwake && s.sleepNote == "kept awake: the work runs on mains power (logind)";
    };
    REQUIRE(test::waitForStatus(awake));
    // The double's list is read in its own thread: it follows within its loop's turn.
    REQUIRE(test::pollUntil([&] { return logind.inhibitors().size() == 1; }, 5s, 20ms));
    const auto held = logind.inhibitors();
    REQUIRE(held.size() == 1);
    CHECK(held[0].what == "sleep");
    CHECK(held[0].who == "nicer");
    CHECK(held[0].mode == "block");
    CHECK_THAT(held[0].why, Catch::Contains("volunteer work runs on mains power"));

    // Paused by the volunteer: the machine may sleep.
    REQUIRE(test::runCommand(std::string(NICER_CLI) + " pause").exitCode == 0);
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) {
        return !s.keepingAwake && s.sleepNote == "may sleep: the work is paused";
    }));
    CHECK(test::pollUntil([&] { return logind.inhibitors().empty(); }, 5s, 20ms));
    REQUIRE(test::runCommand(std::string(NICER_CLI) + " resume").exitCode == 0);
    REQUIRE(test::waitForStatus(awake));
    CHECK(test::pollUntil([&] { return logind.inhibitors().size() == 1; }, 5s, 20ms));

    // On battery: the machine sleeps as it would without nicer; back on mains, awake once the work runs.
    laptop.command("unplug");
    REQUIRE(test::waitForStatus(
        [](const api::DaemonState& s) { return !s.keepingAwake && s.sleepNote == "may sleep: on battery"; }));
    CHECK(test::pollUntil([&] { return logind.inhibitors().empty(); }, 5s, 20ms));
    const auto status = test::runCommand(std::string(NICER_CLI) + " status");
    CHECK_THAT(status.out, Catch::Contains("  sleep        may sleep: on battery"));
    laptop.command("plug");
    REQUIRE(test::waitForStatus(awake));
    CHECK(test::pollUntil([&] { return logind.inhibitors().size() == 1; }, 5s, 20ms));

    // nicerd's end releases it.
    CHECK(daemon.stop() == 0);
    CHECK(test::pollUntil([&] { return logind.inhibitors().empty(); }, 5s, 20ms));
}
