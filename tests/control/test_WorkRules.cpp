#include "control/WorkRules.h"

#include <catch2/catch.hpp>

using namespace nicer::control;

namespace {

ControllerParams withDelay(double seconds) {
    ControllerParams p;
    p.resumeDelay = seconds;
    return p;
}

} // namespace

TEST_CASE("with nothing to say, no rule holds the work") {
    WorkRules rules;
    const auto hold = rules.step({}, ControllerParams{}, 1.0);
    CHECK(hold.rule == Rule::None);
    CHECK(hold.cap == 1.0);
    CHECK(holdText(hold, 0.9).empty());
}

TEST_CASE("on battery the work pauses by default, and resumes only after the delay on mains") {
    WorkRules rules;
    const auto params = withDelay(3.0);
    Surroundings now;
    now.onBattery = true;
    now.batteryPercent = 54.4;
    auto hold = rules.step(now, params, 1.0);
    CHECK(hold.rule == Rule::Battery);
    CHECK(hold.cap == 0.0);
    CHECK(holdText(hold, 0.9) == "paused: on battery, 54%");
    CHECK(holdText(hold, 0.0) == "paused: on battery, 54%"); // said even when the controller holds nothing

    now.onBattery = false;
    hold = rules.step(now, params, 1.0);
    CHECK(hold.cap == 0.0);
    CHECK(hold.reason == "on mains again, resuming in 2 s");
    hold = rules.step(now, params, 1.0);
    CHECK(hold.reason == "on mains again, resuming in 1 s");
    hold = rules.step(now, params, 1.0);
    CHECK(hold.rule == Rule::None);
}

TEST_CASE("a cap on battery holds above the least charge, and pauses under it") {
    WorkRules rules;
    auto params = withDelay(0.0);
    params.batteryCap = 0.3;
    params.batteryMinCharge = 40.0;
    Surroundings now;
    now.onBattery = true;
    now.batteryPercent = 74.0;
    auto hold = rules.step(now, params, 1.0);
    CHECK(hold.cap == 0.3);
    CHECK(holdText(hold, 0.9) == "held to 30%: on battery, 74%");
    CHECK(holdText(hold, 0.2).empty()); // the controller holds the work lower itself

    now.batteryPercent = 39.0;
    hold = rules.step(now, params, 1.0);
    CHECK(hold.cap == 0.0);
    CHECK(holdText(hold, 0.9) == "paused: on battery, 39%, under 40%");
}

TEST_CASE("the power-saver profile counts as battery unless told not to") {
    WorkRules rules;
    auto params = withDelay(0.0);
    Surroundings now;
    now.powerSaver = true;
    auto hold = rules.step(now, params, 1.0);
    CHECK(hold.rule == Rule::PowerSaver);
    CHECK(holdText(hold, 1.0) == "paused: the power-saver profile is on");

    params.powerSaverIsBattery = 0;
    CHECK(rules.step(now, params, 1.0).rule == Rule::None);
}

TEST_CASE("a game pauses the work unless told not to, and it waits after the game ends") {
    WorkRules rules;
    auto params = withDelay(2.0);
    Surroundings now;
    now.games = 1;
    auto hold = rules.step(now, params, 1.0);
    CHECK(holdText(hold, 0.8) == "paused: a game is running");
    now.games = 0;
    hold = rules.step(now, params, 1.0);
    CHECK(holdText(hold, 0.8) == "paused: the game ended, resuming in 1 s");
    CHECK(rules.step(now, params, 1.0).rule == Rule::None);

    params.gamesPause = 0;
    now.games = 2;
    CHECK(rules.step(now, params, 1.0).rule == Rule::None);
}

TEST_CASE("named programs pause the work while they run") {
    WorkRules rules;
    const auto params = withDelay(1.5);
    Surroundings now;
    now.programs = {"blender", "gimp"};
    auto hold = rules.step(now, params, 1.0);
    CHECK(hold.rule == Rule::Program);
    CHECK(holdText(hold, 1.0) == "paused: blender and gimp are running");
    now.programs.clear();
    hold = rules.step(now, params, 1.0);
    CHECK(hold.reason == "blender and gimp ended, resuming in 1 s");
    CHECK(rules.step(now, params, 1.0).rule == Rule::None);
}

TEST_CASE("the tightest rule holds the work: a pause over a cap") {
    WorkRules rules;
    const auto params = withDelay(0.0);
    Surroundings now;
    now.temperature = 83.0;
    now.temperatureTarget = 80.0;
    now.games = 1;
    rules.step(now, params, 1.0);
    auto hold = rules.step(now, params, 1.0);
    CHECK(hold.rule == Rule::Game);
    now.games = 0;
    hold = rules.step(now, params, 1.0);
    CHECK(hold.rule == Rule::Temperature);
    CHECK(hold.cap < 1.0);
    CHECK_THAT(holdText(hold, 1.0),
               Catch::StartsWith("held to ") && Catch::EndsWith(": CPU 83 °C, target 80 °C"));
}

TEST_CASE("a temperature trip says how long the rule waits") {
    WorkRules rules;
    const auto params = withDelay(30.0);
    Surroundings now;
    now.temperature = 88.0;
    now.temperatureTarget = 80.0;
    const auto hold = rules.step(now, params, 1.0);
    CHECK(holdText(hold, 1.0) == "paused: CPU 88 °C, target 80 °C; it ran over 85 °C, resuming in 30 s");
}

TEST_CASE("the fan rule holds the fans' speed only when it has a target") {
    WorkRules rules;
    auto params = withDelay(0.0);
    Surroundings now;
    now.fanSpeed = 4200.0;
    CHECK(rules.step(now, params, 1.0).rule == Rule::None);
    params.fanTarget = 3000.0; // 1200 rpm over: a trip, as 12 °C over the temperature target would be
    const auto hold = rules.step(now, params, 1.0);
    CHECK(hold.rule == Rule::Fan);
    CHECK(holdText(hold, 1.0) == "paused: fans 4200 rpm, target 3000 rpm");
}

TEST_CASE("the temperature target is the volunteer's, or chosen under the sensor's own limits") {
    CHECK(resolveTemperatureTarget(72.0, 84.0, 100.0) == 72.0);
    CHECK(resolveTemperatureTarget(0.0, std::nullopt, std::nullopt) == 80.0);
    CHECK(resolveTemperatureTarget(0.0, 84.0, 100.0) == 74.0);
    CHECK(resolveTemperatureTarget(0.0, std::nullopt, 95.0) == 75.0);
    CHECK(resolveTemperatureTarget(0.0, 45.0, std::nullopt) == kLowestTemperatureTarget);
}

TEST_CASE("the chosen temperature target is 10 °C cooler while you're here, under the same limits") {
    CHECK(resolveTemperatureTarget(0.0, std::nullopt, std::nullopt, true) == 70.0);
    CHECK(resolveTemperatureTarget(0.0, 84.0, 100.0, true) == 70.0);
    CHECK(resolveTemperatureTarget(0.0, 75.0, std::nullopt, true) == 65.0);
    CHECK(resolveTemperatureTarget(72.0, std::nullopt, std::nullopt, true) == 72.0);
}

TEST_CASE("the away profile holds only while you're away, the here one also when nicer cannot tell") {
    ControllerParams p;
    p.temperatureTarget = 60.0;
    p.awayTemperatureTarget = 85.0;
    p.fanTarget = 2000.0;
    p.awayFanTarget = 4000.0;
    p.maxShare = 0.4;
    p.awayMaxShare = 0.9;
    const auto away = profileFor(p, Presence::Away);
    CHECK(away.temperatureTarget == 85.0);
    CHECK(away.fanTarget == 4000.0);
    CHECK(away.maxShare == 0.9);
    for (Presence presence : {Presence::Here, Presence::Unknown}) {
        const auto here = profileFor(p, presence);
        CHECK(here.temperatureTarget == 60.0);
        CHECK(here.fanTarget == 2000.0);
        CHECK(here.maxShare == 0.4);
    }
}

TEST_CASE("the profile's largest share caps the work, and says which profile") {
    WorkRules rules;
    ControllerParams p;
    p.maxShare = 0.25;
    Surroundings now;
    now.presence = Presence::Here;
    auto hold = rules.step(now, p, 1.0);
    CHECK(hold.rule == Rule::Profile);
    CHECK(hold.cap == 0.25);
    CHECK(holdText(hold, 0.9) == "held to 25%: at most 25% while you're here");
    CHECK(holdText(hold, 0.2).empty()); // the controller holds it lower anyway
    now.presence = Presence::Unknown;
    CHECK(rules.step(now, p, 1.0).reason == "at most 25% while nicer cannot tell whether you're here");
    now.presence = Presence::Away;
    CHECK(rules.step(now, p, 1.0).rule == Rule::None); // away-max-share is 1: no cap
    p.awayMaxShare = 0.6;
    hold = rules.step(now, p, 1.0);
    CHECK(hold.cap == 0.6);
    CHECK(hold.reason == "at most 60% while you're away");
    CHECK(ruleName(Rule::Profile) == "profile");
}

TEST_CASE("the fan rule holds the fan target of the profile in force") {
    WorkRules rules;
    ControllerParams p = withDelay(0.0);
    p.fanTarget = 3000.0;
    p.awayFanTarget = 0.0; // no fan rule while away
    Surroundings now;
    now.fanSpeed = 4200.0;
    now.presence = Presence::Here;
    CHECK(rules.step(now, p, 1.0).rule == Rule::Fan);
    now.presence = Presence::Away;
    CHECK(rules.step(now, p, 1.0).rule == Rule::None);
}

TEST_CASE("a temperature target under 40 °C, other than 0, is refused with the reason") {
    ControllerParams p;
    p.temperatureTarget = 30.0;
    const auto valid = validate(p);
    REQUIRE_FALSE(valid);
    CHECK_THAT(valid.error().message,
               Catch::Contains("temperature-target = 30") && Catch::Contains("at least 40"));
    p.temperatureTarget = 110.0;
    CHECK_FALSE(validate(p));
    p.temperatureTarget = 0.0;
    CHECK(validate(p));
    p.awayTemperatureTarget = 35.0;
    const auto away = validate(p);
    REQUIRE_FALSE(away);
    CHECK_THAT(away.error().message, Catch::StartsWith("away-temperature-target = 35 °C is too low"));
}

TEST_CASE("outside the computing hours the work pauses from the hour's edge, and says when they begin") {
    WorkRules rules;
    ControllerParams p;
    p.computeHours = *WeeklyHours::parse("mon-fri 18:00-08:00");
    Surroundings now;
    // Without the local time the schedule does not hold.
    CHECK(rules.step(now, p, 1.0).rule == Rule::None);
    now.localTime = nicer::wallclock::LocalMinute{1, 7 * 60 + 59}; // Monday 07:59
    CHECK(rules.step(now, p, 1.0).rule == Rule::None);
    now.localTime = nicer::wallclock::LocalMinute{1, 8 * 60}; // Monday 08:00: the edge
    auto hold = rules.step(now, p, 1.0);
    CHECK(hold.rule == Rule::Schedule);
    CHECK(hold.cap == 0.0);
    CHECK(holdText(hold, 0.9) ==
          "paused: outside your computing hours (mon-fri 18:00-08:00), which begin in 10 h");
    now.localTime = nicer::wallclock::LocalMinute{1, 17 * 60 + 59};
    CHECK(rules.step(now, p, 1.0).reason ==
          "outside your computing hours (mon-fri 18:00-08:00), which begin in 1 min");
    // At the next edge it runs again at once: no resume delay, the hour is the volunteer's own.
    now.localTime = nicer::wallclock::LocalMinute{1, 18 * 60};
    CHECK(rules.step(now, p, 1.0).rule == Rule::None);
    // Saturday is not named: any hour.
    now.localTime = nicer::wallclock::LocalMinute{6, 12 * 60};
    CHECK(rules.step(now, p, 1.0).rule == Rule::None);
    CHECK(ruleName(Rule::Schedule) == "schedule");
}
