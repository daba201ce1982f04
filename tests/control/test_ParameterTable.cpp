#include "control/ParameterTable.h"
#include "control/ParameterText.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>

using namespace nicer::control;
using namespace std::chrono_literals;

namespace {

/// A value inside the range of @p info that differs from the default, in the text unit.
double otherValue(const ParameterInfo& info, const ControllerParams& p) {
    switch (info.type) {
    case ParameterType::Count:
        return info.max == 1.0 ? 1.0 - info.get(p) : info.get(p) + 3; // a switch, or a count
    case ParameterType::Duration:
        return info.get(p) == 0.25 ? 0.5 : 0.25;
    case ParameterType::Real:
        break;
    case ParameterType::Hours:
        return 0.0; // text: setOther()
    }
    const double v = info.get(p);
    return v + 0.125 <= info.max ? v + 0.125 : v - 0.125;
}

/// Sets @p info's parameter in @p p to a value other than the default's: hours as text, the rest as numbers.
nicer::Result<void> setOther(const ParameterInfo& info, ControllerParams& p) {
    if (info.type == ParameterType::Hours) {
        return info.setText(p, "mon-fri 18:00-08:00; sat,sun any");
    }
    return info.set(p, otherValue(info, ControllerParams{}));
}

} // namespace

TEST_CASE("every field of ControllerParams is in the table exactly once", "[ParameterTable]") {
    // Setting each parameter in turn to another value changes exactly one field, a different one each time:
    // together they cover every field, since changing all of them leaves nothing equal to the defaults.
    const ControllerParams defaults;
    ControllerParams all;
    std::set<int> changedFields;
    for (const auto& info : parameterTable()) {
        CAPTURE(info.key);
        ControllerParams p;
        REQUIRE(setOther(info, p).ok());
        CHECK_FALSE(p == defaults);
        const bool fields[] = {p.reserveBand != defaults.reserveBand,
                               p.minMultiplier != defaults.minMultiplier,
                               p.maxMultiplier != defaults.maxMultiplier,
                               p.multiplierDecay != defaults.multiplierDecay,
                               p.overloadThreshold != defaults.overloadThreshold,
                               p.idleEpsilon != defaults.idleEpsilon,
                               p.period != defaults.period,
                               p.temperatureTarget != defaults.temperatureTarget,
                               p.awayTemperatureTarget != defaults.awayTemperatureTarget,
                               p.fanTarget != defaults.fanTarget,
                               p.awayFanTarget != defaults.awayFanTarget,
                               p.maxShare != defaults.maxShare,
                               p.awayMaxShare != defaults.awayMaxShare,
                               p.memoryShare != defaults.memoryShare,
                               p.awayMemoryShare != defaults.awayMemoryShare,
                               p.memoryStall != defaults.memoryStall,
                               p.maxInstances != defaults.maxInstances,
                               p.awayMaxInstances != defaults.awayMaxInstances,
                               p.resumeDelay != defaults.resumeDelay,
                               p.batteryCap != defaults.batteryCap,
                               p.batteryMinCharge != defaults.batteryMinCharge,
                               p.powerSaverIsBattery != defaults.powerSaverIsBattery,
                               p.keepAwake != defaults.keepAwake,
                               p.gamesPause != defaults.gamesPause,
                               p.boincClock != defaults.boincClock,
                               p.awayDelay != defaults.awayDelay,
                               p.logindIdleHint != defaults.logindIdleHint,
                               p.publishInputTime != defaults.publishInputTime,
                               !(p.computeHours == defaults.computeHours),
                               !(p.transferHours == defaults.transferHours)};
        int count = 0;
        for (int i = 0; i < 30; ++i) {
            if (fields[i]) {
                ++count;
                CHECK(changedFields.insert(i).second);
            }
        }
        CHECK(count == 1);
        REQUIRE(setOther(info, all).ok());
    }
    CHECK(changedFields.size() == 30);
    CHECK(parameterTable().size() == 30);
    CHECK(all.reserveBand != defaults.reserveBand);
    CHECK(all.period != defaults.period);
}

TEST_CASE("names are unique and lookups find each parameter", "[ParameterTable]") {
    std::set<std::string> keys, busNames, labels;
    for (const auto& info : parameterTable()) {
        CHECK(keys.insert(info.key).second);
        CHECK(busNames.insert(info.busName).second);
        CHECK(labels.insert(info.label).second);
        CHECK(findParameter(info.key) == &info);
        CHECK(findBusParameter(info.busName) == &info);
        CHECK(std::string(info.busSignature).size() == 1);
        CHECK_FALSE(std::string(info.help).empty());
    }
    CHECK(findParameter("reserve_band") == nullptr);
    CHECK(findBusParameter("reserve-band") == nullptr);
    CHECK(parameterNameList() ==
          "reserve-band, min-multiplier, max-multiplier, multiplier-decay, "
          "overload-threshold, idle-epsilon, period, temperature-target, "
          "away-temperature-target, fan-target, away-fan-target, max-share, "
          "away-max-share, memory-share, away-memory-share, memory-stall, max-instances, "
          "away-max-instances, resume-delay, battery-cap, battery-min-charge, "
          "power-saver-is-battery, keep-awake, games-pause, boinc-clock, away-delay, "
          "logind-idle-hint, publish-input-time, "
          "compute-hours, transfer-hours");
    CHECK(parameterNameList(true) ==
          "ReserveBand, MinMultiplier, MaxMultiplier, MultiplierDecay, "
          "OverloadThreshold, IdleEpsilon, PeriodUSec, TemperatureTarget, AwayTemperatureTarget, FanTarget, "
          "AwayFanTarget, MaxShare, AwayMaxShare, MemoryShare, AwayMemoryShare, MemoryStall, MaxInstances, "
          "AwayMaxInstances, ResumeDelay, BatteryCap, BatteryMinCharge, "
          "PowerSaverIsBattery, KeepAwake, GamesPause, KeepBoincClock, AwayDelay, LogindIdleHint, "
          "PublishInputTime, "
          "ComputeHours, TransferHours");
}

TEST_CASE("the defaults are inside every range, and the edges are as validate() has them",
          "[ParameterTable]") {
    const ControllerParams defaults;
    for (const auto& info : parameterTable()) {
        CAPTURE(info.key);
        if (info.type == ParameterType::Hours) {
            // Text, checked when set: every hour by default; the help gives the form.
            CHECK(info.get == nullptr);
            CHECK(info.getText(defaults) == "any");
            CHECK(std::string(info.busSignature) == "s");
            CHECK_THAT(parameterHelp(info), Catch::Contains(rangeText(info)));
            ControllerParams p;
            const auto refused = info.setText(p, "25:00-26:00");
            REQUIRE_FALSE(refused);
            CHECK_THAT(refused.error().message, Catch::StartsWith(std::string(info.key) + ": '25:00-26:00'"));
            continue;
        }
        CHECK(info.getText == nullptr);
        CHECK(inRange(info, info.get(defaults)));
        CHECK(inRange(info, info.min) == !info.minOpen);
        CHECK(inRange(info, info.max) == !info.maxOpen);
        CHECK_FALSE(inRange(info, std::nan("")));
        // A gap above 0 is refused, its edge and 0 allowed: as validate() has it.
        if (info.lowestAboveZero > 0.0) {
            CHECK(inRange(info, 0.0));
            CHECK(inRange(info, info.lowestAboveZero));
            CHECK_FALSE(inRange(info, info.lowestAboveZero / 2.0));
        }
        // The slider covers only allowed values and holds the default.
        CHECK(inRange(info, info.sliderMin / info.displayScale));
        CHECK(inRange(info, info.sliderMax / info.displayScale));
        CHECK(info.get(defaults) * info.displayScale >= info.sliderMin);
        CHECK(info.get(defaults) * info.displayScale <= info.sliderMax);
        // The help of the command line shows the same range as the errors.
        CHECK_THAT(parameterHelp(info), Catch::Contains(rangeText(info)));
        // A value just outside the range is refused by validate(), naming the parameter and the range.
        ControllerParams p;
        const double outside = info.type == ParameterType::Count ? info.min - 1 : info.min - 0.001;
        if (info.set(p, outside).ok()) {
            const auto valid = validate(p);
            REQUIRE_FALSE(valid.ok());
            CHECK_THAT(valid.error().message, Catch::Contains(info.key) && Catch::Contains(rangeText(info)));
        }
    }
}

TEST_CASE("each range is written from the row's bounds, in the words --help and the errors show",
          "[ParameterTable]") {
    const auto range = [](std::string_view key) { return rangeText(*findParameter(key)); };
    CHECK(range("reserve-band") == "in (0, 0.5] (a fraction of the whole machine)");
    CHECK(range("min-multiplier") == "in [1, 64] and at most max-multiplier");
    CHECK(range("max-multiplier") == "in [1, 64] and at least min-multiplier");
    CHECK(range("multiplier-decay") == "in (0, 1]");
    CHECK(range("overload-threshold") == ">= 0 (whole periods)");
    CHECK(range("idle-epsilon") == "in [0, 0.5) (a fraction of the whole machine)");
    CHECK(range("period") == "between 10 ms and 10 s");

    // A row's bounds are the text: moving one moves what the errors say.
    ParameterInfo moved = *findParameter("reserve-band");
    moved.max = 0.25;
    moved.maxOpen = true;
    CHECK(rangeText(moved) == "in (0, 0.25) (a fraction of the whole machine)");
    ParameterInfo period = *findParameter("period");
    period.min = 0.5;
    period.max = 60.0;
    CHECK(rangeText(period) == "between 500 ms and 60 s");
}

TEST_CASE("the text form and the table agree on every parameter", "[ParameterTable]") {
    ControllerParams p;
    p.period = 250ms;
    p.transferHours = *WeeklyHours::parse("22:00-06:00; sat,sun any");
    for (const auto& info : parameterTable()) {
        ControllerParams read;
        const auto text = parametersAsText(p);
        for (const auto& [key, value] : text) {
            REQUIRE(setParameterFromText(read, key, value).ok());
        }
        CAPTURE(info.key);
        CHECK(sameValue(info, read, p));
    }
    CHECK(parameterAsText(*findParameter("transfer-hours"), p) == "22:00-06:00; sat,sun any");
    CHECK(findParameter("period")->get(p) == 0.25);
    CHECK(findParameter("period")->get(p) * findParameter("period")->busScale == 250000);
}
