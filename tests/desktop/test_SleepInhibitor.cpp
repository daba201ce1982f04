// logind's sleep inhibitor, against a double of login1 on a real dbus-daemon (tests/presence/FakeLogind.h):
// held while wanted, with the reason given, released at once when no longer wanted or when its owner ends,
// and a refusal said, never retried in a burst.
#include "EventLoop.h"
#include "desktop/SleepInhibitor.h"
#include "libsystemd/RestartableBus.h"
#include "presence/FakeLogind.h"

#include <catch2/catch.hpp>

#include <unistd.h>

using namespace nicer;

namespace {

/// Runs @p loop for @p time: long enough for a call it should not have made to be answered.
void settle(sd_event* loop, std::chrono::milliseconds time) {
    (void)test::runLoopUntil(loop, [] { return false; }, time);
}

} // namespace

TEST_CASE("the sleep inhibitor is held while wanted and released when not") {
    auto loop = test::newLoop();
    test::RestartableBus bus;
    test::FakeLogind logind(loop.get(), bus.address(), getuid());
    auto inhibitor = std::make_unique<desktop::SleepInhibitor>(loop.get(), bus.address());
    inhibitor->want("");
    CHECK_FALSE(inhibitor->held());
    CHECK(logind.inhibitors().empty());

    inhibitor->want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return inhibitor->held(); }));
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
    CHECK(logind.inhibitors().empty());

    // Its owner ending releases it too (nicerd stopping, or crashing: the fd closes with the process).
    inhibitor->want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return inhibitor->held(); }));
    CHECK(logind.inhibitors().size() == 1);
    inhibitor.reset();
    CHECK(logind.inhibitors().empty());
}

TEST_CASE("a refused sleep inhibitor is said, and asked for again only after a minute") {
    auto loop = test::newLoop();
    test::RestartableBus bus;
    test::FakeLogind logind(loop.get(), bus.address(), getuid());
    logind.refuseInhibit(true);
    desktop::SleepInhibitor inhibitor(loop.get(), bus.address());
    inhibitor.want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !inhibitor.note().empty(); }));
    CHECK_FALSE(inhibitor.held());
    CHECK(inhibitor.note() ==
          "logind refused to keep the machine awake: Access denied to inhibit sleep");
    logind.refuseInhibit(false);
    inhibitor.want("volunteer work runs");
    settle(loop.get(), std::chrono::milliseconds(200));
    CHECK_FALSE(inhibitor.held()); // not asked again within the minute
    CHECK(logind.inhibitors().empty());
    // No longer wanted: the refusal is forgotten, and the next want asks at once.
    inhibitor.want("");
    CHECK(inhibitor.note().empty());
    inhibitor.want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return inhibitor.held(); }));
    CHECK(logind.inhibitors().size() == 1);
}

TEST_CASE("without logind on the bus the inhibitor is not held, and the note says why") {
    auto loop = test::newLoop();
    test::RestartableBus bus;
    desktop::SleepInhibitor inhibitor(loop.get(), bus.address());
    inhibitor.want("volunteer work runs");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !inhibitor.note().empty(); }));
    CHECK_FALSE(inhibitor.held());
    CHECK_THAT(inhibitor.note(), Catch::StartsWith("logind refused to keep the machine awake: "));
}
