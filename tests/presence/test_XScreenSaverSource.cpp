// X11's XScreenSaver idle time as a source of presence, against a real X server (Xvfb) given input through
// XTest (xdotool): here at input, away once the delay passes, here again at the next input; the X authority
// used as the user manager hands it over; and an X server that is missing or ends, each said.
#include "EventLoop.h"
#include "ScopedEnv.h"
#include "presence/XScreenSaverSource.h"
#include "presence/Xvfb.h"

#include <catch2/catch.hpp>

#include <optional>

using namespace nicer;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<presence::XScreenSaverSource> watch(sd_event* loop, const std::string& display,
                                                    const std::string& xauthority,
                                                    std::chrono::milliseconds delay, int& changes) {
    auto made =
        presence::XScreenSaverSource::create(loop, display, xauthority, delay, [&changes] { ++changes; });
    REQUIRE(made);
    return std::move(*made);
}

} // namespace

TEST_CASE("XScreenSaver's idle time makes away after the delay and here at the next input") {
    auto loop = test::newLoop();
    test::Xvfb x;
    int changes = 0;
    x.input();
    auto source = watch(loop.get(), x.display(), "", 1500ms, changes);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return source->reading().answers; }));
    CHECK(source->reading().source == "XScreenSaver on " + x.display());
    CHECK(source->reading().sinceInput.has_value());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return source->reading().idle; }));
    CHECK(*source->reading().sinceInput >= 1500ms);
    const int before = changes;
    x.input();
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !source->reading().idle; }));
    CHECK(changes > before);
    CHECK(*source->reading().sinceInput < 1500ms);
}

TEST_CASE("XScreenSaver is read with the cookie of the authority file it is given") {
    auto loop = test::newLoop();
    test::Xvfb x(true);
    int changes = 0;
    // Without the cookie the server refuses nicer, as it refuses any client (XAUTHORITY is not set here).
    {
        test::ScopedEnv noAuthority("XAUTHORITY", "/nonexistent");
        auto refused = watch(loop.get(), x.display(), "", 1s, changes);
        CHECK_FALSE(refused->reading().answers);
        CHECK_THAT(refused->reading().note, Catch::Contains("refused"));
    }
    auto source = watch(loop.get(), x.display(), x.authorityFile().string(), 1s, changes);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return source->reading().answers; }));
    x.input();
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !source->reading().idle; }));
}

TEST_CASE("a missing X server or one that ends gives no answer, and says why") {
    auto loop = test::newLoop();
    int changes = 0;
    std::optional<test::Xvfb> x(std::in_place);
    const std::string display = x->display();
    auto source = watch(loop.get(), display, "", 10s, changes);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return source->reading().answers; }));
    x.reset();
    // The next question finds the connection closed; while here it is asked within 5 s.
    REQUIRE(test::runLoopUntil(
        loop.get(), [&] { return !source->reading().answers; }, 15s));
    CHECK(source->reading().note == "the X server at " + display + " closed the connection");
    auto nothing = watch(loop.get(), display, "", 10s, changes);
    CHECK_FALSE(nothing->reading().answers);
    CHECK_THAT(nothing->reading().note, Catch::StartsWith("no X server answers at " + display));
}
