#include "control/ControllerParams.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace nicer::control;
using namespace std::chrono_literals;

TEST_CASE("the default parameters are the thesis's and valid", "[params]") {
    const ControllerParams p;
    CHECK(validate(p).ok());
    CHECK(p.minMultiplier == 1);
    CHECK(p.maxMultiplier == 16);
    CHECK(p.overloadThreshold == 4);
    CHECK(p.idleEpsilon == 0);
}

TEST_CASE("each out-of-range parameter is named with its allowed range", "[params]") {
    struct Case {
        const char* what;
        void (*apply)(ControllerParams&);
        const char* expected;
    };
    const auto c = GENERATE(
        Case{"band 0", [](ControllerParams& p) { p.reserveBand = 0; },
             "reserve-band = 0 is out of range: it must be in (0, 0.5]"},
        Case{"band > 0.5", [](ControllerParams& p) { p.reserveBand = 0.51; }, "reserve-band = 0.51"},
        Case{"band NaN", [](ControllerParams& p) { p.reserveBand = std::nan(""); }, "reserve-band = nan"},
        Case{"min < 1", [](ControllerParams& p) { p.minMultiplier = 0.5; },
             "min-multiplier = 0.5 is out of range"},
        Case{"max > 64", [](ControllerParams& p) { p.maxMultiplier = 65; },
             "max-multiplier = 65 is out of range"},
        Case{"min > max",
             [](ControllerParams& p) {
                 p.minMultiplier = 9;
                 p.maxMultiplier = 8;
             },
             "min-multiplier = 9 is greater than max-multiplier = 8"},
        Case{"threshold < 0", [](ControllerParams& p) { p.overloadThreshold = -1; },
             "overload-threshold = -1"},
        Case{"epsilon 0.5", [](ControllerParams& p) { p.idleEpsilon = 0.5; },
             "idle-epsilon = 0.5 is out of range: it must be in [0, 0.5)"},
        Case{"epsilon < 0", [](ControllerParams& p) { p.idleEpsilon = -0.1; }, "idle-epsilon = -0.1"},
        Case{"period 9 ms", [](ControllerParams& p) { p.period = 9ms; },
             "period = 9 ms is out of range: it must be between 10 ms and 10 s"},
        Case{"period 11 s", [](ControllerParams& p) { p.period = 11s; }, "period = 11000 ms"});
    CAPTURE(c.what);
    ControllerParams p;
    c.apply(p);
    const auto result = validate(p);
    REQUIRE_FALSE(result.ok());
    CHECK_THAT(result.error().message, Catch::Contains(c.expected));
}

TEST_CASE("the edges of each range are accepted", "[params]") {
    ControllerParams p;
    p.reserveBand = 0.5;
    p.minMultiplier = 64;
    p.maxMultiplier = 64;
    p.overloadThreshold = 0;
    p.idleEpsilon = 0.499;
    p.period = 10ms;
    CHECK(validate(p).ok());
    p.period = 10s;
    CHECK(validate(p).ok());
}
