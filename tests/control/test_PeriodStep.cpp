#include "control/PeriodStep.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace nicer::control;

namespace {

PeriodInput idle(double share) {
    PeriodInput input;
    input.idle = share;
    return input;
}

/// A period of the split signal answering the outside part.
PeriodInput outsidePart(double idleShare, double work, double outside) {
    PeriodInput input = idle(idleShare);
    input.work = work;
    input.outside = outside;
    input.outsideSignal = true;
    return input;
}

PeriodInput hot(double idleShare, double celsius, double target) {
    PeriodInput input = idle(idleShare);
    input.surroundings.temperature = celsius;
    input.surroundings.temperatureTarget = target;
    return input;
}

void checkSame(const ControllerState& a, const ControllerState& b) {
    CHECK(a.quota == b.quota);
    CHECK(a.multiplier == b.multiplier);
    CHECK(a.overloadCount == b.overloadCount);
}

} // namespace

TEST_CASE("with no rule holding the work, a period's quota is the controller's", "[PeriodStep]") {
    const ControllerParams params{.overloadThreshold = 2};
    PeriodStep step(params);
    Controller byHand(params);
    for (const double share : {0.8, 0.6, 0.0, 0.0, 0.0, 0.3, 0.9}) {
        CAPTURE(share);
        const auto decision = step.step(idle(share));
        const auto& expected = byHand.step(share);
        checkSame(decision.controller, expected);
        checkSame(step.state(), expected);
        CHECK(decision.quota == expected.quota);
        CHECK(decision.hold.rule == Rule::None);
        CHECK(decision.heldBy == Rule::None);
        CHECK(decision.holdText.empty());
    }
    CHECK_FALSE(step.paused());
}

TEST_CASE("a pause gives quota 0 and holds the controller, which starts afresh on resume", "[PeriodStep]") {
    const ControllerParams params{.overloadThreshold = 2};
    PeriodStep step(params);
    step.step(idle(0.8));
    step.step(idle(0.0));
    const ControllerState running = step.state();
    REQUIRE(running.quota > 0.0);
    REQUIRE(running.overloadCount == 1);

    step.pause();
    CHECK(step.paused());
    // Periods without idle that would stop the work: the controller sees none of them.
    for (int i = 0; i < 4; ++i) {
        const auto decision = step.step(idle(0.0));
        CHECK(decision.quota == 0.0);
        checkSame(decision.controller, running);
    }
    SECTION("the controller starts afresh on resume") {
        step.resume();
        CHECK_FALSE(step.paused());
        checkSame(step.state(), Controller(params).state());
        const auto decision = step.step(idle(0.6));
        Controller fresh(params);
        checkSame(decision.controller, fresh.step(0.6));
        CHECK(decision.quota == fresh.state().quota);
        CHECK(decision.quota > 0.0);
    }
    SECTION("a rule that holds the work while paused is not named, and its wait runs on into the resume") {
        PeriodInput onBattery = idle(0.9);
        onBattery.surroundings.onBattery = true;
        auto decision = step.step(onBattery);
        CHECK(decision.hold.rule == Rule::Battery);
        CHECK(decision.heldBy == Rule::None);
        CHECK(decision.holdText.empty());
        CHECK(decision.quota == 0.0);
        for (int i = 0; i < 10; ++i) {
            step.step(idle(0.9));
        }
        step.resume();
        decision = step.step(idle(0.9));
        CHECK(decision.controller.quota > 0.0);
        CHECK(decision.quota == 0.0);
        CHECK(decision.heldBy == Rule::Battery);
        CHECK(decision.holdText == "paused: on mains again, resuming in 49 s");
    }
}

TEST_CASE("resume without a pause keeps the controller's state", "[PeriodStep]") {
    PeriodStep step(ControllerParams{});
    step.step(idle(0.8));
    const ControllerState running = step.state();
    step.resume();
    checkSame(step.state(), running);
}

TEST_CASE("restart starts the controller over and keeps a pause", "[PeriodStep]") {
    const ControllerParams params;
    PeriodStep step(params);
    step.step(idle(0.0));
    step.step(idle(0.9));
    REQUIRE(step.state().quota > 0.0);
    step.pause();
    step.restart();
    CHECK(step.paused());
    checkSame(step.state(), Controller(params).state());
    CHECK(step.step(idle(0.9)).quota == 0.0);
}

TEST_CASE("the outside signal answers the outside part, the machine's idle without it", "[PeriodStep]") {
    const ControllerParams params{.overloadThreshold = 2};
    PeriodStep step(params);
    Controller byHand(params);
    const std::vector<PeriodInput> periods{outsidePart(0.5, 0.25, 0.0), outsidePart(0.0, 0.5, 0.5),
                                           outsidePart(0.0, 0.25, 0.75), outsidePart(0.0, 0.01, 0.0)};
    for (const auto& input : periods) {
        const auto decision = step.step(input);
        checkSame(decision.controller, byHand.stepOutside(input.idle, *input.work, *input.outside));
        CHECK(decision.quota == byHand.state().quota);
    }
    SECTION("a period asked for the outside part without the split shares answers the whole machine") {
        PeriodInput blind = idle(0.3);
        blind.outsideSignal = true;
        checkSame(step.step(blind).controller, byHand.step(0.3));
    }
    SECTION("a period of the machine signal with the shares known answers the whole machine") {
        PeriodInput machine = outsidePart(0.3, 0.2, 0.1);
        machine.outsideSignal = false;
        checkSame(step.step(machine).controller, byHand.step(0.3));
    }
}

TEST_CASE("where the work yields to everything, the outside demand counts as none", "[PeriodStep]") {
    const ControllerParams params{.overloadThreshold = 2};
    PeriodStep rootIdle(params);
    PeriodStep beside(params);
    Controller byHand(params);
    bool besideStopped = false;
    for (int i = 0; i < 6; ++i) {
        // A hog outside the user manager takes the whole machine.
        PeriodInput input = outsidePart(0.0, 0.0, 1.0);
        const double besideQuota = beside.step(input).quota;
        besideStopped = besideStopped || (i > 0 && besideQuota == 0.0);
        input.yieldsToEverything = true;
        const auto decision = rootIdle.step(input);
        checkSame(decision.controller, byHand.stepOutside(0.0, 0.0, 0.0));
        CHECK(decision.quota == 1.0);
        CHECK(decision.controller.overloadCount == 0);
    }
    // The same periods without the root idle slice stop the work: the flag is what made the difference.
    CHECK(besideStopped);
}

TEST_CASE(
    "a temperature rule's cap holds the work when it is lower than the controller's quota, and is named",
    "[PeriodStep][rules]") {
    PeriodStep step(ControllerParams{});
    // 75 °C against 70 °C: the rule's cap falls by 0.01 a second, while the controller's quota climbs to 1.
    const auto first = step.step(hot(0.9, 75.0, 70.0));
    CHECK(first.hold.rule == Rule::Temperature);
    CHECK(first.hold.cap == Approx(0.99));
    CHECK(first.controller.quota == Approx(0.85));
    CHECK(first.quota == first.controller.quota); // the controller holds the work lower: no rule named
    CHECK(first.heldBy == Rule::None);
    CHECK(first.holdText.empty());

    const auto second = step.step(hot(0.9, 75.0, 70.0));
    CHECK(second.controller.quota == 1.0);
    CHECK(second.hold.cap == Approx(0.98));
    CHECK(second.quota == second.hold.cap);
    CHECK(second.heldBy == Rule::Temperature);
    CHECK(second.holdText == "held to 98%: CPU 75 °C, target 70 °C");

    SECTION("far over the target the rule pauses the work") {
        const auto tripped = step.step(hot(0.9, 76.0, 70.0));
        CHECK(tripped.quota == 0.0);
        CHECK(tripped.heldBy == Rule::Temperature);
        CHECK_THAT(tripped.holdText, Catch::StartsWith("paused: CPU 76 °C, target 70 °C"));
    }
    SECTION("the rule runs on its own clock: the period's seconds") {
        PeriodInput longer = hot(0.9, 75.0, 70.0);
        longer.seconds = 4.0;
        CHECK(step.step(longer).hold.cap == Approx(0.94));
    }
}
