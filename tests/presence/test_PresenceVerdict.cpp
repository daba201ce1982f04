// The verdict from the sources' readings (a lock first, then the first source that answers, else not known
// with every source's reason), and the displays read from the user manager's environment block.
#include "presence/PresenceVerdict.h"
#include "presence/PresenceWatch.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace nicer;
using control::Presence;
using presence::SourceReading;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const milliseconds kDelay = seconds(180);

SourceReading silent(const char* source, const char* note) {
    return {.source = source, .note = note};
}

SourceReading counting(const char* source, milliseconds sinceInput) {
    return {.source = source, .answers = true, .sinceInput = sinceInput};
}

} // namespace

TEST_CASE("a source that counts the time since input is away once it reaches the delay") {
    const std::vector<SourceReading> before{counting("XScreenSaver on :0", seconds(179))};
    const auto here = presence::decide(before, kDelay);
    CHECK(here.presence == Presence::Here);
    CHECK(here.source == "XScreenSaver on :0");
    CHECK(here.reason == "input within 3 min");
    const std::vector<SourceReading> at{counting("XScreenSaver on :0", seconds(180))};
    const auto away = presence::decide(at, kDelay);
    CHECK(away.presence == Presence::Away);
    CHECK(away.reason == "no input for 3 min");
}

TEST_CASE("the first source that answers decides, in the order given") {
    SourceReading compositor{.source = "compositor", .answers = true, .idle = true};
    const std::vector<SourceReading> readings{silent("GNOME", "not GNOME"), compositor,
                                              counting("X11", seconds(1))};
    const auto verdict = presence::decide(readings, kDelay);
    CHECK(verdict.presence == Presence::Away);
    CHECK(verdict.source == "compositor");
    CHECK(verdict.reason == "no input for 3 min");
}

TEST_CASE("a locked screen is away whatever the sources of input say") {
    SourceReading logind{
        .source = "logind (session 3)", .answers = true, .desktopDelay = true, .locked = true};
    const std::vector<SourceReading> readings{counting("X11", seconds(2)), logind};
    const auto verdict = presence::decide(readings, kDelay);
    CHECK(verdict.presence == Presence::Away);
    CHECK(verdict.source == "logind (session 3)");
    CHECK(verdict.reason == "the screen is locked");
}

TEST_CASE("logind's idle hint keeps the desktop's delay and says so") {
    SourceReading logind{.source = "logind (session 3)", .answers = true, .idle = true, .desktopDelay = true};
    const std::vector<SourceReading> idle{logind};
    CHECK(presence::decide(idle, kDelay) ==
          presence::PresenceVerdict{Presence::Away, "logind (session 3)", "the desktop says it is idle", {}});
    logind.idle = false;
    const std::vector<SourceReading> inUse{logind};
    CHECK(presence::decide(inUse, kDelay).reason == "the desktop says it is in use");
}

TEST_CASE("with no source answering the presence is not known, and each source says why") {
    const std::vector<SourceReading> readings{silent("GNOME", "not a GNOME session"),
                                              silent("logind", "logind is not on the system bus")};
    const auto verdict = presence::decide(readings, kDelay);
    CHECK(verdict.presence == Presence::Unknown);
    CHECK(verdict.source.empty());
    CHECK(verdict.reason == "not a GNOME session; logind is not on the system bus");
    CHECK(presence::decide({}, kDelay).reason == "no source of the desktop's input was found");
}

TEST_CASE("the displays are read from an environment block, as the user manager's Environment gives it") {
    const auto found = presence::displaysIn({"HOME=/home/v", "DISPLAY=:1", "WAYLAND_DISPLAY=wayland-0",
                                             "XAUTHORITY=/run/user/1000/.mutter-Xwaylandauth", "not an entry",
                                             "DISPLAY_X=:9"});
    CHECK(found.x11 == ":1");
    CHECK(found.wayland == "wayland-0");
    CHECK(found.xauthority == "/run/user/1000/.mutter-Xwaylandauth");
    CHECK(presence::displaysIn({"PATH=/usr/bin"}) == presence::Displays{});
}
