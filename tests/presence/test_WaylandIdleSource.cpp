// WaylandIdleSource against a compositor double (presence/FakeCompositor.h): libwayland-server in a thread of
// the test, with a seat and ext-idle-notify-v1, on a socket in a directory of the test's own, reached by its
// absolute path.
#include "EventLoop.h"
#include "ScopedEnv.h"
#include "TempDir.h"
#include "presence/FakeCompositor.h"
#include "presence/WaylandIdleSource.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace nicer;
using namespace std::chrono_literals;

namespace {

/// A source on a loop of its own for the compositor at @p display, and how often it said it changed.
class WatchedSource {
public:
    WatchedSource(const std::string& display, std::chrono::milliseconds delay)
        : m_loop(test::newLoop()) {
        auto made =
            presence::WaylandIdleSource::create(m_loop.get(), display, delay, [this] { ++m_changes; });
        REQUIRE(made);
        m_source = std::move(*made);
    }
    WatchedSource(const WatchedSource&) = delete;
    WatchedSource& operator=(const WatchedSource&) = delete;

    presence::WaylandIdleSource& source() { return *m_source; }
    presence::SourceReading reading() const { return m_source->reading(); }
    int changes() const { return m_changes; }
    /// Runs the loop until @p condition holds of the reading (the timeout bounds a hang).
    template <typename Condition>
    bool runUntil(Condition&& condition, std::chrono::milliseconds timeout = 10s) {
        return loopUntil([&] { return condition(m_source->reading()); }, timeout);
    }
    /// Runs the loop until @p condition holds.
    template <typename Condition>
    bool loopUntil(Condition&& condition, std::chrono::milliseconds timeout = 10s) {
        return test::runLoopUntil(m_loop.get(), std::forward<Condition>(condition), timeout);
    }
    /// Runs what the loop has due without waiting: the changed() call of the reading as it is now.
    void settle() { test::spin(m_loop.get(), 5); }

private:
    libsystemd::EventPtr m_loop;
    int m_changes = 0;
    std::unique_ptr<presence::WaylandIdleSource> m_source; // before the loop goes
};

bool answering(const presence::SourceReading& reading) {
    return reading.answers;
}

bool idleNow(const presence::SourceReading& reading) {
    return reading.answers && reading.idle;
}

bool hereNow(const presence::SourceReading& reading) {
    return reading.answers && !reading.idle;
}

/// The compositor's socket, in a directory of the test's own.
struct Socket {
    test::TempDir dir{"nicer-wayland"};
    std::filesystem::path path = dir.path / "wayland-test";
};

} // namespace

TEST_CASE("the reading is idle once the delay passes without input, and here again at the next input",
          "[presence][WaylandIdleSource]") {
    Socket socket;
    test::FakeCompositor compositor(socket.path);
    WatchedSource watched(socket.path.string(), 300ms);
    const auto first = watched.reading();
    CHECK_FALSE(first.answers);
    CHECK_THAT(first.note, Catch::Contains("waiting"));
    CHECK(first.source ==
          "the compositor's idle notifications (ext-idle-notify-v1) on " + socket.path.string());

    REQUIRE(watched.runUntil(answering));
    auto here = watched.reading();
    CHECK_FALSE(here.idle);
    CHECK(here.note.empty());
    CHECK_FALSE(here.sinceInput.has_value()); // the protocol does not tell it
    CHECK_FALSE(here.locked);
    REQUIRE(watched.loopUntil([&] { return !compositor.timeouts().empty(); }));
    CHECK(compositor.timeouts() == std::vector<std::uint32_t>{300});

    REQUIRE(watched.runUntil(idleNow));
    watched.settle();
    const int changes = watched.changes();
    compositor.input();
    REQUIRE(watched.runUntil(hereNow));
    watched.settle();
    CHECK(watched.changes() > changes);
    // The compositor's timer started again at the input: idle again after the delay.
    REQUIRE(watched.runUntil(idleNow));
}

TEST_CASE("setDelay asks the compositor for a notification of the new delay, and only when it differs",
          "[presence][WaylandIdleSource]") {
    Socket socket;
    test::FakeCompositor compositor(socket.path);
    WatchedSource watched(socket.path.string(), 200ms);
    REQUIRE(watched.runUntil(idleNow));

    // A new notification is not idle until its `idled`: at once "here", and so for the next 60 s.
    watched.source().setDelay(60s);
    CHECK(hereNow(watched.reading()));
    REQUIRE(watched.loopUntil([&] { return compositor.timeouts().size() == 2; }));
    CHECK(compositor.timeouts() == std::vector<std::uint32_t>{200, 60'000});

    // The same delay asks nothing; the next one does, after it on the same connection.
    watched.source().setDelay(60s);
    watched.source().setDelay(250ms);
    REQUIRE(watched.loopUntil([&] { return compositor.timeouts().size() >= 3; }));
    CHECK(compositor.timeouts() == std::vector<std::uint32_t>{200, 60'000, 250});
    REQUIRE(watched.runUntil(idleNow));
}

TEST_CASE(
    "a compositor without ext-idle-notify-v1 gives a reading that does not answer and names the protocol",
    "[presence][WaylandIdleSource]") {
    Socket socket;
    test::FakeCompositor compositor(socket.path, {.idleNotifier = false});
    WatchedSource watched(socket.path.string(), 200ms);
    REQUIRE(watched.runUntil([](const presence::SourceReading& reading) {
        return reading.note.find("has no ext-idle-notify-v1") != std::string::npos;
    }));
    CHECK_FALSE(watched.reading().answers);
    CHECK_FALSE(watched.reading().idle);
    watched.settle();
    CHECK(watched.changes() == 1);
    CHECK(compositor.timeouts().empty());
}

TEST_CASE("a compositor without a seat gives a reading that does not answer and says so",
          "[presence][WaylandIdleSource]") {
    Socket socket;
    test::FakeCompositor compositor(socket.path, {.seat = false});
    WatchedSource watched(socket.path.string(), 200ms);
    REQUIRE(watched.runUntil([](const presence::SourceReading& reading) {
        return reading.note.find("no seat") != std::string::npos;
    }));
    CHECK_FALSE(watched.reading().answers);
    CHECK(compositor.timeouts().empty());
}

TEST_CASE("no compositor at the display gives a reading that says there is none",
          "[presence][WaylandIdleSource]") {
    test::TempDir dir("nicer-wayland");
    SECTION("an absolute path") {
        const std::string display = (dir.path / "wayland-none").string();
        WatchedSource watched(display, 200ms);
        const auto reading = watched.reading();
        CHECK_FALSE(reading.answers);
        CHECK_THAT(reading.note, Catch::Contains("no Wayland compositor at " + display));
        CHECK_THAT(reading.note, Catch::Contains("No such file or directory"));
    }
    SECTION("a name in XDG_RUNTIME_DIR") {
        test::ScopedEnv runtimeDir("XDG_RUNTIME_DIR", dir.path.string());
        WatchedSource watched("wayland-none", 200ms);
        CHECK_THAT(watched.reading().note, Catch::Contains("no Wayland compositor at wayland-none"));
        CHECK_THAT(watched.reading().note, Catch::Contains((dir.path / "wayland-none").string()));
    }
    SECTION("a name without XDG_RUNTIME_DIR") {
        const test::ScopedEnv runtimeDir("XDG_RUNTIME_DIR", "");
        ::unsetenv("XDG_RUNTIME_DIR"); // unset; ScopedEnv puts back what was there
        WatchedSource watched("wayland-none", 200ms);
        CHECK_THAT(watched.reading().note, Catch::Contains("XDG_RUNTIME_DIR is not set"));
    }
}

TEST_CASE("the compositor going away makes the reading not answer, and says the connection was lost",
          "[presence][WaylandIdleSource]") {
    Socket socket;
    test::FakeCompositor compositor(socket.path);
    WatchedSource watched(socket.path.string(), 200ms);
    REQUIRE(watched.runUntil(idleNow));
    watched.settle();
    const int changes = watched.changes();
    compositor.stop();
    REQUIRE(watched.runUntil([](const presence::SourceReading& reading) { return !reading.answers; }));
    const auto lost = watched.reading();
    CHECK_FALSE(lost.idle);
    CHECK_THAT(lost.note, Catch::Contains("was lost") && Catch::Contains("closed the connection"));
    watched.settle();
    CHECK(watched.changes() == changes + 1);
}

TEST_CASE("after a lost connection poll connects again, once 10 s have passed since the last try",
          "[presence][WaylandIdleSource]") {
    Socket socket;
    auto compositor = std::make_unique<test::FakeCompositor>(socket.path);
    WatchedSource watched(socket.path.string(), 200ms);
    REQUIRE(watched.runUntil(answering));
    compositor->stop();
    REQUIRE(watched.runUntil([](const presence::SourceReading& reading) { return !reading.answers; }));

    compositor = std::make_unique<test::FakeCompositor>(socket.path);
    const auto polled = [&](const presence::SourceReading& reading) {
        watched.source().poll();
        return reading.answers;
    };
    // Well within 10 s of the first try: poll() leaves it.
    CHECK_FALSE(watched.runUntil(polled, 300ms));
    CHECK_THAT(watched.reading().note, Catch::Contains("was lost"));
    REQUIRE(watched.runUntil(polled, 15s));
    REQUIRE(watched.loopUntil([&] { return !compositor->timeouts().empty(); }));
    CHECK(compositor->timeouts() == std::vector<std::uint32_t>{200});
    REQUIRE(watched.runUntil(idleNow));
}
