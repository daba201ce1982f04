#include "EventLoop.h"
#include "TempDir.h"
#include "daemon/ControlLoop.h"
#include "daemon/UserPause.h"
#include "fakes/FakeActuator.h"
#include "fakes/FakeMachine.h"
#include "util/TextFile.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <optional>

using namespace nicer;
using namespace std::chrono;
using daemon::PauseEnd;
using daemon::UserPause;

namespace {

/// A control loop over a fake machine, and the volunteer's pause of it kept in a file of a fresh directory.
struct PausedLoop {
    PausedLoop() {
        stat.copyFixture("four-cpus-t0.txt");
        REQUIRE(loop.prime().ok());
    }
    /// The pause as nicerd makes it at start; @p ended counts the snoozes that ended.
    std::unique_ptr<UserPause> create() {
        return std::make_unique<UserPause>(event.get(), loop, file, [this](const Result<void>& resumed) {
            CHECK(resumed.ok());
            ++ended;
        });
    }
    api::DaemonState state(const UserPause& pause) const {
        api::DaemonState s;
        loop.describe(s);
        pause.describe(s);
        return s;
    }

    libsystemd::EventPtr event = test::newLoop();
    test::TempDir dir{"nicer-user-pause"};
    std::filesystem::path file = dir.path / "nicer" / "paused";
    test::StatFile stat;
    test::FakeActuator actuator;
    daemon::ControlLoop loop{cpu::CpuSampler(stat.path()), control::ControllerParams{}, actuator, 10};
    int ended = 0;
};

std::uint64_t pauseEndUSec(system_clock::time_point t) {
    return static_cast<std::uint64_t>(duration_cast<microseconds>(t.time_since_epoch()).count());
}

} // namespace

TEST_CASE("the pause file holds the snooze's end, and an older nicerd's file holds until resume",
          "[UserPause]") {
    const auto end = system_clock::time_point(microseconds(1'796'000'000'123'456));
    CHECK(*daemon::readPauseFileText(daemon::pauseFileText(end), "paused") == PauseEnd(end));
    CHECK(*daemon::readPauseFileText(daemon::pauseFileText(std::nullopt), "paused") == PauseEnd());
    CHECK(*daemon::readPauseFileText("The volunteer work is paused until `nicer resume`: nicerd starts it "
                                     "paused while this file is here.\n",
                                     "paused") == PauseEnd());
    const auto bad = daemon::readPauseFileText("until-usec = soon\n", "paused");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "paused:1: 'soon' is not a time (microseconds since 1970, more than 0)");
    CHECK_FALSE(daemon::readPauseFileText("until = 5\n", "paused"));
}

TEST_CASE("a snooze pauses the work until its end, which the wall clock's timer keeps", "[UserPause]") {
    PausedLoop t;
    auto pause = t.create();
    const auto now = system_clock::now();

    // A time that has passed is refused, and changes nothing.
    const auto past = pause->pause(now - seconds(1), now);
    REQUIRE_FALSE(past);
    CHECK(past.error().kind == ErrorKind::InvalidInput);
    CHECK_FALSE(t.loop.paused());
    CHECK_FALSE(std::filesystem::exists(t.file));

    const auto end = floor<microseconds>(now + milliseconds(300));
    REQUIRE(pause->pause(end, now).ok());
    CHECK(t.loop.paused());
    CHECK(t.state(*pause).paused);
    CHECK(t.state(*pause).pausedUntilUSec == pauseEndUSec(end));
    CHECK(*daemon::readPauseFileText(*readTextFile(t.file), "paused") == PauseEnd(end));
    // Not before its end...
    test::spin(t.event.get());
    CHECK(t.loop.paused());
    // ...and at it: the work runs again and the file is gone.
    REQUIRE(test::runLoopUntil(t.event.get(), [&] { return t.ended == 1; }));
    CHECK(system_clock::now() >= end);
    CHECK_FALSE(t.loop.paused());
    CHECK(t.state(*pause).pausedUntilUSec == 0);
    CHECK_FALSE(std::filesystem::exists(t.file));
}

TEST_CASE("a pause until resume replaces a snooze, and resume ends either", "[UserPause]") {
    PausedLoop t;
    auto pause = t.create();
    const auto now = system_clock::now();
    REQUIRE(pause->pause(now + milliseconds(200), now).ok());
    REQUIRE(pause->pause(std::nullopt, now).ok());
    CHECK(t.state(*pause).pausedUntilUSec == 0);
    CHECK(*daemon::readPauseFileText(*readTextFile(t.file), "paused") == PauseEnd());
    // The snooze's timer went with it: the pause outlasts its old end.
    test::runLoopUntil(
        t.event.get(), [] { return false; }, milliseconds(400));
    CHECK(t.loop.paused());
    CHECK(t.ended == 0);

    REQUIRE(pause->pause(system_clock::now() + hours(1), system_clock::now()).ok());
    REQUIRE(pause->resume().ok());
    CHECK_FALSE(t.loop.paused());
    CHECK_FALSE(std::filesystem::exists(t.file));
}

TEST_CASE("a start of nicerd finds the pause it kept, unless its snooze ended meanwhile", "[UserPause]") {
    PausedLoop t;
    const auto now = system_clock::now();
    SECTION("a snooze still to end holds, and ends on time") {
        REQUIRE(writeFileAtomically(t.file, daemon::pauseFileText(now + milliseconds(300))).ok());
        auto pause = t.create();
        REQUIRE(pause->restore(now).ok());
        CHECK(t.loop.paused());
        CHECK(t.state(*pause).pausedUntilUSec == pauseEndUSec(now + milliseconds(300)));
        REQUIRE(test::runLoopUntil(t.event.get(), [&] { return t.ended == 1; }));
        CHECK_FALSE(t.loop.paused());
    }
    SECTION("a snooze that ended while nicerd was not running: the work runs, and the file goes") {
        REQUIRE(writeFileAtomically(t.file, daemon::pauseFileText(now - minutes(5))).ok());
        auto pause = t.create();
        REQUIRE(pause->restore(now).ok());
        CHECK_FALSE(t.loop.paused());
        CHECK_FALSE(std::filesystem::exists(t.file));
    }
    SECTION("a file whose end cannot be read keeps the work paused until resume") {
        std::filesystem::create_directories(t.file.parent_path());
        std::ofstream(t.file) << "until-usec = tomorrow\n";
        auto pause = t.create();
        REQUIRE(pause->restore(now).ok());
        CHECK(t.loop.paused());
        CHECK(t.state(*pause).pausedUntilUSec == 0);
    }
    SECTION("no file: no pause") {
        auto pause = t.create();
        REQUIRE(pause->restore(now).ok());
        CHECK_FALSE(t.loop.paused());
    }
}
