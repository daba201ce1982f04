#include "EventLoop.h"
#include "libsystemd/Timer.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace nicer;
using namespace std::chrono_literals;

TEST_CASE("a timer fires once, not before it is due") {
    auto loop = test::newLoop();
    int fired = 0;
    libsystemd::Timer::Time firedAt{0};
    auto timer = libsystemd::Timer::create(loop.get(), [&] {
        ++fired;
        // steady_clock is CLOCK_MONOTONIC, the timer's clock.
        firedAt = std::chrono::duration_cast<libsystemd::Timer::Time>(
            std::chrono::steady_clock::now().time_since_epoch());
    });
    REQUIRE(timer);
    CHECK_FALSE(timer->armed());
    test::spin(loop.get());
    CHECK(fired == 0);

    // Relative to the loop's time (when its iteration woke up), as sd-event counts.
    const auto armedAt = timer->now();
    timer->armIn(30ms);
    CHECK(timer->due() == armedAt + 30ms);
    CHECK(timer->armed());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return fired > 0; }));
    CHECK(firedAt - armedAt >= 30ms);
    CHECK_FALSE(timer->armed());
    test::spin(loop.get());
    CHECK(fired == 1);
}

TEST_CASE("a timer armed for a time in the past fires on the next iteration") {
    auto loop = test::newLoop();
    int fired = 0;
    auto timer = libsystemd::Timer::create(loop.get(), [&] { ++fired; });
    REQUIRE(timer);
    const auto past = timer->now() - 1s;
    timer->armAt(past);
    CHECK(timer->due() == past);
    REQUIRE(test::runLoopUntil(
        loop.get(), [&] { return fired == 1; }, 1s));
}

TEST_CASE("a disarmed timer does not fire, re-arming moves it") {
    auto loop = test::newLoop();
    int fired = 0;
    auto timer = libsystemd::Timer::create(loop.get(), [&] { ++fired; });
    REQUIRE(timer);
    timer->armIn(0ms);
    timer->disarm();
    CHECK_FALSE(timer->armed());
    test::spin(loop.get());
    CHECK(fired == 0);

    timer->armIn(1h);
    timer->armIn(0ms);
    REQUIRE(test::runLoopUntil(
        loop.get(), [&] { return fired == 1; }, 1s));
}

TEST_CASE("a timer re-armed from its callback fires on a fixed schedule") {
    auto loop = test::newLoop();
    std::vector<libsystemd::Timer::Time> dues;
    libsystemd::Timer timer;
    auto created = libsystemd::Timer::create(loop.get(), [&] {
        dues.push_back(timer.due());
        if (dues.size() < 3) {
            timer.armAt(timer.due() + 10ms);
        }
    });
    REQUIRE(created);
    timer = std::move(*created);
    timer.armIn(0ms);
    const auto first = timer.due();
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return dues.size() == 3; }));
    CHECK(dues == std::vector<libsystemd::Timer::Time>{first, first + 10ms, first + 20ms});
}

TEST_CASE("an exception from a timer's callback reaches its error handler and the loop goes on") {
    auto loop = test::newLoop();
    int fired = 0;
    auto timer = libsystemd::Timer::create(loop.get(), [&] {
        ++fired;
        throw std::runtime_error("disk on fire");
    });
    REQUIRE(timer);
    std::string error;
    timer->setErrorHandler([&](std::string_view what) { error = what; });
    timer->armIn(0ms);
    REQUIRE(test::runLoopUntil(
        loop.get(), [&] { return fired == 1; }, 1s));
    CHECK(error == "disk on fire");

    // Without a handler it is swallowed, and the timer still works.
    timer->setErrorHandler({});
    timer->armIn(0ms);
    REQUIRE(test::runLoopUntil(
        loop.get(), [&] { return fired == 2; }, 1s));
    int later = 0;
    auto other = libsystemd::Timer::create(loop.get(), [&] { ++later; });
    REQUIRE(other);
    other->armIn(0ms);
    CHECK(test::runLoopUntil(
        loop.get(), [&] { return later == 1; }, 1s));
}

TEST_CASE("a timer may destroy itself from its callback") {
    auto loop = test::newLoop();
    auto owned = std::make_unique<libsystemd::Timer>();
    std::string seen;
    std::string capture = "still here";
    auto created = libsystemd::Timer::create(loop.get(), [&, capture] {
        owned.reset();
        seen = capture; // the callback's captures outlive the Timer until it returns
    });
    REQUIRE(created);
    *owned = std::move(*created);
    owned->armIn(0ms);
    REQUIRE(test::runLoopUntil(
        loop.get(), [&] { return !owned; }, 1s));
    CHECK(seen == "still here");
}

TEST_CASE("a destroyed timer never fires") {
    auto loop = test::newLoop();
    int fired = 0;
    {
        auto timer = libsystemd::Timer::create(loop.get(), [&] { ++fired; });
        REQUIRE(timer);
        timer->armIn(0ms);
    }
    test::spin(loop.get());
    CHECK(fired == 0);
}

TEST_CASE("a defer runs once per trigger, on the next iteration") {
    auto loop = test::newLoop();
    int ran = 0;
    auto defer = libsystemd::Defer::create(loop.get(), [&] { ++ran; });
    REQUIRE(defer);
    test::spin(loop.get());
    CHECK(ran == 0);
    CHECK_FALSE(defer->pending());

    defer->trigger();
    defer->trigger();
    CHECK(defer->pending());
    CHECK(ran == 0);
    REQUIRE(test::runLoopUntil(
        loop.get(), [&] { return ran == 1; }, 1s));
    test::spin(loop.get());
    CHECK(ran == 1);

    defer->trigger();
    defer->cancel();
    test::spin(loop.get());
    CHECK(ran == 1);
}

TEST_CASE("an exception from a defer's callback reaches its error handler") {
    auto loop = test::newLoop();
    auto defer = libsystemd::Defer::create(loop.get(), [] { throw 42; });
    REQUIRE(defer);
    std::string error;
    defer->setErrorHandler([&](std::string_view what) { error = what; });
    defer->trigger();
    CHECK(test::runLoopUntil(
        loop.get(), [&] { return !error.empty(); }, 1s));
    CHECK(error == "unknown exception");
}

TEST_CASE("an empty timer or defer does nothing") {
    libsystemd::Timer timer;
    libsystemd::Defer defer;
    CHECK_FALSE(timer);
    CHECK_FALSE(defer);
    timer.armIn(1s);
    defer.trigger();
    CHECK_FALSE(timer.armed());
    CHECK_FALSE(defer.pending());
}
