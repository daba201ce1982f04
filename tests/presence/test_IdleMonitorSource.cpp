// GNOME's idle monitor as a source of presence, against a double of Mutter's org.gnome.Mutter.IdleMonitor on
// a real dbus-daemon (tests/presence/FakeIdleMonitor.h): away once the delay passes without input, here at
// the next input, the watch asked anew for a new delay, and a monitor that is absent or leaves.
#include "EventLoop.h"
#include "libsystemd/RestartableBus.h"
#include "presence/FakeIdleMonitor.h"
#include "presence/IdleMonitorSource.h"

#include <catch2/catch.hpp>

#include <optional>

using namespace nicer;
using namespace std::chrono_literals;

namespace {

/// A bus, nicerd's connection to it and the source on that connection.
struct OnBus {
    OnBus()
        : connection(loop.get(), libsystemd::BusTarget::at(bus.address())) {
        REQUIRE(connection.connect());
    }
    void watch(std::chrono::milliseconds delay) {
        auto made = presence::IdleMonitorSource::create(connection.bus(), delay, [this] { ++changes; });
        REQUIRE(made);
        source = std::move(*made);
    }

    libsystemd::EventPtr loop = test::newLoop();
    test::RestartableBus bus;
    libsystemd::Connection connection;
    std::unique_ptr<presence::IdleMonitorSource> source;
    int changes = 0;
};

} // namespace

TEST_CASE("GNOME's idle monitor makes away after the delay and here at the next input") {
    OnBus on;
    test::FakeIdleMonitor shell(on.loop.get(), on.bus.address());
    on.watch(400ms);
    REQUIRE(test::runLoopUntil(on.loop.get(), [&] { return on.source->reading().answers; }));
    CHECK(on.source->reading().source == "GNOME Shell's idle monitor");
    CHECK_FALSE(on.source->reading().idle);
    REQUIRE(test::runLoopUntil(on.loop.get(), [&] { return on.source->reading().idle; }));
    CHECK(shell.idleTime() >= 400ms);
    const int before = on.changes;
    shell.input();
    REQUIRE(test::runLoopUntil(on.loop.get(), [&] { return !on.source->reading().idle; }));
    CHECK(on.changes > before);
    CHECK(on.source->reading().answers);
    // Away again after the next quiet spell: the idle watch fires each time, and a new user-active watch is
    // added for the next return.
    REQUIRE(test::runLoopUntil(on.loop.get(), [&] { return on.source->reading().idle; }));
    shell.input();
    REQUIRE(test::runLoopUntil(on.loop.get(), [&] { return !on.source->reading().idle; }));
}

TEST_CASE("GNOME's idle monitor is asked for a watch of the new delay") {
    OnBus on;
    test::FakeIdleMonitor shell(on.loop.get(), on.bus.address());
    on.watch(60s);
    REQUIRE(test::runLoopUntil(on.loop.get(), [&] { return shell.intervals.size() == 1; }));
    CHECK(shell.intervals.front() == 60s);
    on.source->setDelay(300ms);
    REQUIRE(test::runLoopUntil(on.loop.get(), [&] { return on.source->reading().idle; }));
    REQUIRE(shell.intervals.size() == 2);
    CHECK(shell.intervals.back() == 300ms);
    // The old watch was removed: one idle watch and one user-active watch remain.
    CHECK(test::runLoopUntil(
        on.loop.get(), [&] { return shell.watchCount() == 2; }, 2s));
    test::spin(on.loop.get(), 10);
    CHECK(shell.watchCount() == 2);
}

TEST_CASE("a session without GNOME Shell gives no answer and says why") {
    OnBus on;
    on.watch(1s);
    REQUIRE(
        test::runLoopUntil(on.loop.get(), [&] { return !on.source->reading().note.starts_with("waiting"); }));
    CHECK_FALSE(on.source->reading().answers);
    CHECK_THAT(on.source->reading().note, Catch::Contains("not on the session bus"));
}

TEST_CASE("GNOME Shell leaving the bus is seen, and its return is followed") {
    OnBus on;
    std::optional<test::FakeIdleMonitor> shell(std::in_place, on.loop.get(), on.bus.address());
    on.watch(5s);
    REQUIRE(test::runLoopUntil(on.loop.get(), [&] { return on.source->reading().answers; }));
    shell.reset();
    REQUIRE(test::runLoopUntil(on.loop.get(), [&] { return !on.source->reading().answers; }));
    CHECK_THAT(on.source->reading().note, Catch::Contains("left the session bus"));
    shell.emplace(on.loop.get(), on.bus.address());
    REQUIRE(test::runLoopUntil(on.loop.get(), [&] { return on.source->reading().answers; }));
    CHECK(shell->intervals == std::vector<std::chrono::milliseconds>{5s});
}
