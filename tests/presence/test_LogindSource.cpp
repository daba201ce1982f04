// logind as a source of presence, against a double of login1 on a real dbus-daemon (tests/presence/
// FakeLogind.h): the user's display session found, its lock and idle hints followed as they change, and
// logind or a graphical session missing, each said.
#include "EventLoop.h"
#include "libsystemd/RestartableBus.h"
#include "presence/FakeLogind.h"
#include "presence/LogindSource.h"

#include <catch2/catch.hpp>

#include <unistd.h>

using namespace nicer;

namespace {

std::unique_ptr<presence::LogindSource> watch(sd_event* loop, const std::string& address, int& changes) {
    auto made = presence::LogindSource::create(loop, {.systemBusAddress = address, .uid = getuid()},
                                               [&changes] { ++changes; });
    REQUIRE(made);
    return std::move(*made);
}

} // namespace

TEST_CASE("logind's lock and idle hints of the display session are followed as they change") {
    auto loop = test::newLoop();
    test::RestartableBus bus;
    test::FakeLogind logind(loop.get(), bus.address(), getuid());
    int changes = 0;
    auto source = watch(loop.get(), bus.address(), changes);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return source->reading().answers; }));
    auto now = source->reading();
    CHECK(now.source == "logind (session 3)");
    CHECK_FALSE(now.idle);
    CHECK_FALSE(now.locked);
    CHECK(now.desktopDelay);

    logind.setLockedHint(true);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return source->reading().locked; }));
    logind.setLockedHint(false);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !source->reading().locked; }));
    const int before = changes;
    logind.setIdleHint(true);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return source->reading().idle; }));
    CHECK(changes > before);
    logind.setIdleHint(false);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !source->reading().idle; }));
    CHECK(source->reading().answers);
}

TEST_CASE("a user without a graphical session gets no answer from logind, and the reason") {
    auto loop = test::newLoop();
    test::RestartableBus bus;
    test::FakeLogind logind(loop.get(), bus.address(), getuid(), false);
    int changes = 0;
    auto source = watch(loop.get(), bus.address(), changes);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !source->reading().note.starts_with("waiting"); }));
    CHECK_FALSE(source->reading().answers);
    CHECK(source->reading().note == "logind knows no graphical session of yours");
}

TEST_CASE("logind missing from the system bus is said, and another user's session is not read") {
    auto loop = test::newLoop();
    test::RestartableBus bus;
    int changes = 0;
    {
        auto source = watch(loop.get(), bus.address(), changes);
        REQUIRE(
            test::runLoopUntil(loop.get(), [&] { return !source->reading().note.starts_with("waiting"); }));
        CHECK(source->reading().note == "logind is not on the system bus");
    }
    // logind knows only another user: nicerd's own user is not logged in, and nothing is read.
    test::FakeLogind other(loop.get(), bus.address(), getuid() + 1);
    auto source = watch(loop.get(), bus.address(), changes);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !source->reading().note.starts_with("waiting"); }));
    CHECK_FALSE(source->reading().answers);
    CHECK_THAT(source->reading().note, Catch::StartsWith("logind knows no session of yours"));
    other.setLockedHint(true);
    test::spin(loop.get(), 20);
    CHECK_FALSE(source->reading().locked);
}

TEST_CASE("a graphical session that starts later becomes the display session logind is read for") {
    auto loop = test::newLoop();
    test::RestartableBus bus;
    test::FakeLogind logind(loop.get(), bus.address(), getuid());
    int changes = 0;
    auto source = watch(loop.get(), bus.address(), changes);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return source->reading().source == "logind (session 3)"; }));
    logind.startDisplaySession("c1");
    REQUIRE(
        test::runLoopUntil(loop.get(), [&] { return source->reading().source == "logind (session c1)"; }));
    logind.setLockedHint(true);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return source->reading().locked; }));
}
