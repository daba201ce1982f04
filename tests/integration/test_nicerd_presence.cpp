// Here or away through the real nicerd on the real user manager: a real X server (Xvfb) given input through
// XTest makes nicerd's presence "here" and no input for the away delay "away"; a lock that logind (a double
// on a private system bus) says is away at once. Each switches the profile in force (its largest share)
// within a period, shown in the bus's state that `nicer status --json` prints. Which cgroup path: the hybrid
// machines' user slice; presence does not depend on the placement.
#include "EventLoop.h"
#include "IdleMachineStat.h"
#include "NicerdProcess.h"
#include "Poll.h"
#include "dbus/client/DaemonClient.h"
#include "libsystemd/RestartableBus.h"
#include "presence/FakeLogind.h"
#include "presence/Xvfb.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <unistd.h>

using namespace nicer;
using namespace std::chrono_literals;
using control::Presence;

namespace {

/// logind's double on its own bus and loop, in a thread of its own, as the real one runs beside nicerd.
class LogindThread {
public:
    LogindThread() {
        m_thread = std::thread([this] {
            auto loop = test::newLoop();
            test::FakeLogind logind(loop.get(), m_bus.address(), ::getuid());
            m_logind = &logind;
            m_ready = true;
            while (!m_stop) {
                sd_event_run(loop.get(), 20'000);
                if (m_lock.exchange(-1) >= 0) {
                    logind.setLockedHint(m_locked);
                }
                m_idle = logind.idleHint();
            }
        });
        REQUIRE(test::pollUntil([&] { return m_ready.load(); }, 10s, 10ms));
    }
    ~LogindThread() {
        m_stop = true;
        m_thread.join();
    }
    const std::string& address() const { return m_bus.address(); }
    /// As `loginctl lock-session` makes logind say.
    void setLocked(bool locked) {
        m_locked = locked;
        m_lock = 1;
    }
    /// The display session's IdleHint as logind has it now.
    bool idle() const { return m_idle; }

private:
    test::RestartableBus m_bus;
    std::thread m_thread;
    test::FakeLogind* m_logind = nullptr;
    std::atomic<bool> m_ready{false};
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_locked{false};
    std::atomic<bool> m_idle{false};
    std::atomic<int> m_lock{-1};
};

} // namespace

TEST_CASE("input on the X server makes nicerd's profile here, and no input for the delay away") {
    const auto dir = test::freshStateDir("presence-x11");
    test::Xvfb x;
    LogindThread logind;
    const test::IdleMachineStat stat(dir / "stat");
    x.input();
    test::NicerdProcess daemon(
        {"--period", "0.25", "--proc-stat", stat.path(), "--away-delay", "3", "--max-share", "0.25",
         "--away-max-share", "1"},
        dir,
        {{"DISPLAY", x.display()}, {"WAYLAND_DISPLAY", ""}, {"DBUS_SYSTEM_BUS_ADDRESS", logind.address()}});
    REQUIRE(daemon.waitReady());
    // Here: the here profile's largest share holds the work, and says so.
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) {
        return s.presence == Presence::Here && s.heldBy == "profile" && s.quota > 0.0 &&
               s.quota <= 0.25 + 1e-9;
    }));
    auto now = test::tryDaemonStatus();
    REQUIRE(now);
    CHECK(now->presenceSource == "XScreenSaver on " + x.display());
    CHECK(now->presenceReason == "input within 3 s");
    CHECK_THAT(now->holdReason, Catch::Contains("at most 25% while you're here"));
    // No input for the delay: away, and the away profile lets the work have the idle machine.
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.presence == Presence::Away; }));
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.quota > 0.5 && s.heldBy.empty(); }));
    now = test::tryDaemonStatus();
    REQUIRE(now);
    CHECK(now->presenceReason == "no input for 3 s");
    // Input again: here, and the cap back within a period or two of the state saying so.
    x.input();
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.presence == Presence::Here; }));
    REQUIRE(test::waitForStatus([](const api::DaemonState& s) { return s.quota <= 0.25 + 1e-9; }));
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
