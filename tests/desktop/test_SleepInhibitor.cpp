// The sleep inhibitor against doubles of logind (tests/presence/FakeLogind.h) and of the desktop portal
// (tests/desktop/FakePortal.h), each on a real dbus-daemon: logind's held while wanted, with the reason
// given, released at once when no longer wanted or when its owner ends; the portal's where logind refuses (as
// its polkit policy does for a user service); and when neither grants it, both reasons said, never retried in
// a burst.
#include "EventLoop.h"
#include "desktop/FakePortal.h"
#include "desktop/SleepInhibitor.h"
#include "libsystemd/RestartableBus.h"
#include "presence/FakeLogind.h"

#include <catch2/catch.hpp>

#include <unistd.h>

using namespace nicer;

namespace {

/// Runs @p loop for @p time: long enough for a call it should not have made to be answered.
void settle(sd_event* loop, std::chrono::milliseconds time) {
    (void)test::runLoopUntil(
        loop, [] { return false; }, time);
}

/// A system bus and a session bus of the test's own.
struct Buses {
    test::RestartableBus system;
    test::RestartableBus session;

    std::unique_ptr<desktop::SleepInhibitor> inhibitor(sd_event* loop) const {
        return std::make_unique<desktop::SleepInhibitor>(loop, libsystemd::BusTarget::at(system.address()),
                                                         libsystemd::BusTarget::at(session.address()));
    }
};

} // namespace

TEST_CASE("logind's sleep inhibitor is held while wanted and released when not") {
    auto loop = test::newLoop();
    const Buses buses;
    test::FakeLogind logind(loop.get(), buses.system.address(), getuid());
    auto inhibitor = buses.inhibitor(loop.get());
    inhibitor->want("");
    CHECK_FALSE(inhibitor->held());
    CHECK(logind.inhibitors().empty());

    inhibitor->want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return inhibitor->held(); }));
    CHECK(inhibitor->heldBy() == "logind");
    auto held = logind.inhibitors();
    REQUIRE(held.size() == 1);
    CHECK(held[0].what == "sleep");
    CHECK(held[0].who == "nicer");
    CHECK(held[0].why == "volunteer work runs");
    CHECK(held[0].mode == "block");
    CHECK(inhibitor->note().empty());

    // Wanted again with the same reason: the one held stays, and no second one is asked for.
    inhibitor->want("volunteer work runs");
    settle(loop.get(), std::chrono::milliseconds(100));
    CHECK(logind.inhibitors().size() == 1);

    // Another reason: the new one is taken before the old one goes.
    inhibitor->want("another reason");
    REQUIRE(test::runLoopUntil(loop.get(), [&] {
        const auto now = logind.inhibitors();
        return now.size() == 1 && now[0].why == "another reason";
    }));
    CHECK(inhibitor->held());

    inhibitor->want("");
    CHECK_FALSE(inhibitor->held());
    // Released at once; logind (its double) sees the pipe's end close once every copy is closed,
    // dbus-daemon's too, which passed the descriptor on and closes its own a moment later.
    CHECK(test::runLoopUntil(loop.get(), [&] { return logind.inhibitors().empty(); }));

    // Its owner ending releases it too (nicerd stopping, or crashing: the fd closes with the process).
    inhibitor->want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return inhibitor->held(); }));
    CHECK(logind.inhibitors().size() == 1);
    inhibitor.reset();
    CHECK(test::runLoopUntil(loop.get(), [&] { return logind.inhibitors().empty(); }));
}

TEST_CASE("where logind refuses, the desktop's portal keeps the machine awake until released or left") {
    auto loop = test::newLoop();
    const Buses buses;
    test::FakeLogind logind(loop.get(), buses.system.address(), getuid());
    logind.refuseInhibit(true); // polkit's answer to a user service
    test::FakePortal portal(loop.get(), buses.session.address());
    auto inhibitor = buses.inhibitor(loop.get());
    inhibitor->want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return inhibitor->held(); }));
    CHECK(inhibitor->heldBy() == "the desktop's portal");
    CHECK(logind.inhibitors().empty());
    auto held = portal.inhibitions();
    REQUIRE(held.size() == 1);
    CHECK(held[0].flags == 4); // suspend, never idle: the screen still locks
    CHECK(held[0].reason == "volunteer work runs");

    // Another reason: a new inhibition, and the old one closed.
    inhibitor->want("another reason");
    REQUIRE(test::runLoopUntil(loop.get(), [&] {
        const auto now = portal.inhibitions();
        return now.size() == 1 && now[0].reason == "another reason";
    }));

    inhibitor->want("");
    CHECK_FALSE(inhibitor->held());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return portal.inhibitions().empty(); }));

    // Its owner ending (its connection gone) ends the inhibition too.
    inhibitor->want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return inhibitor->held(); }));
    inhibitor.reset();
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return portal.inhibitions().empty(); }));
}

TEST_CASE("when neither logind nor a portal grants it, both reasons are said, and it is asked again only "
          "after a minute") {
    auto loop = test::newLoop();
    const Buses buses;
    test::FakeLogind logind(loop.get(), buses.system.address(), getuid());
    logind.refuseInhibit(true);
    auto inhibitor = buses.inhibitor(loop.get()); // no portal on the session bus
    inhibitor->want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !inhibitor->note().empty(); }));
    CHECK_FALSE(inhibitor->held());
    CHECK(inhibitor->note() == "the machine cannot be kept awake: logind refused (Access denied to inhibit "
                               "sleep), and no desktop portal is on the session bus");
    logind.refuseInhibit(false);
    inhibitor->want("volunteer work runs");
    settle(loop.get(), std::chrono::milliseconds(200));
    CHECK_FALSE(inhibitor->held()); // not asked again within the minute
    CHECK(logind.inhibitors().empty());
    // No longer wanted: the refusal is forgotten, and the next want asks at once.
    inhibitor->want("");
    CHECK(inhibitor->note().empty());
    inhibitor->want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return inhibitor->held(); }));
    CHECK(logind.inhibitors().size() == 1);
}
