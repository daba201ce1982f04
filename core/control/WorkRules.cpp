#include "control/WorkRules.h"

#include "util/Text.h"

#include <algorithm>
#include <cmath>

namespace nicer::control {

namespace {

/// A fan's reading in the unit of its TargetLoop: a hundred rpm stands where a degree does for temperature.
constexpr double kRpmPerUnit = 100.0;

std::string degrees(double celsius) {
    return text::shortNumber(std::round(celsius)) + " °C";
}

std::string percent(double share) {
    return text::shortNumber(std::round(share * 100.0)) + "%";
}

std::string waitText(double seconds) {
    return "resuming in " + text::shortNumber(std::ceil(seconds)) + " s";
}

/// "blender", "blender and gimp", "blender, gimp and krita".
std::string nameList(const std::vector<std::string>& names) {
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i) {
        list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    }
    return list;
}

} // namespace

std::string_view ruleName(Rule rule) {
    switch (rule) {
    case Rule::None:
        return "";
    case Rule::Temperature:
        return "temperature";
    case Rule::Fan:
        return "fan";
    case Rule::Battery:
        return "battery";
    case Rule::PowerSaver:
        return "power-saver";
    case Rule::Game:
        return "game";
    case Rule::Program:
        return "program";
    case Rule::Profile:
        return "profile";
    case Rule::Schedule:
        return "schedule";
    case Rule::Memory:
        return "memory";
    }
    return "";
}

Profile profileFor(const ControllerParams& params, Presence presence) {
    if (presence == Presence::Away) {
        return {presence,
                params.awayTemperatureTarget,
                params.awayFanTarget,
                params.awayMaxShare,
                params.awayMemoryShare,
                params.awayMaxInstances};
    }
    return {presence,        params.temperatureTarget, params.fanTarget,
            params.maxShare, params.memoryShare,       params.maxInstances};
}

std::string profileText(Presence presence) {
    switch (presence) {
    case Presence::Here:
        return "while you're here";
    case Presence::Away:
        return "while you're away";
    case Presence::Unknown:
        break;
    }
    return "while nicer cannot tell whether you're here";
}

double resolveTemperatureTarget(double param, std::optional<double> max, std::optional<double> crit,
                                bool here) {
    if (param > 0.0) {
        return param;
    }
    double target = here ? 80.0 - kHereCooler : 80.0;
    if (max) {
        target = std::min(target, *max - 10.0);
    }
    if (crit) {
        target = std::min(target, *crit - 20.0);
    }
    return std::max(target, kLowestTemperatureTarget);
}

Hold WorkRules::pausing(Rule rule, Wait& wait, Cause cause, double seconds, double resumeDelay) {
    if (cause.active) {
        wait = {.left = resumeDelay, .cap = cause.cap, .what = std::move(cause.after)};
        return {.rule = rule, .cap = cause.cap, .reason = std::move(cause.reason)};
    }
    if (wait.left <= 0.0) {
        return {};
    }
    wait.left = std::max(0.0, wait.left - seconds);
    if (wait.left <= 0.0) {
        return {};
    }
    return {.rule = rule, .cap = wait.cap, .reason = wait.what + ", " + waitText(wait.left)};
}

Hold WorkRules::temperatureHold(const Surroundings& now, const ControllerParams& params, double seconds) {
    if (!now.temperature) {
        return {};
    }
    const double target = now.temperatureTarget;
    const double cap = m_temperature.step(*now.temperature, target, seconds, params.resumeDelay);
    std::string reason = "CPU " + degrees(*now.temperature) + ", target " + degrees(target);
    if (m_temperature.waitLeft() > 0.0) {
        reason += "; it ran over " + degrees(target + TargetTuning{}.tripMargin) + ", " +
                  waitText(m_temperature.waitLeft());
    }
    return {.rule = Rule::Temperature, .cap = cap, .reason = std::move(reason)};
}

Hold WorkRules::fanHold(const Surroundings& now, const ControllerParams& params, double seconds) {
    const double target = profileFor(params, now.presence).fanTarget;
    if (!now.fanSpeed || target <= 0.0) {
        m_fan.reset();
        return {};
    }
    const double cap =
        m_fan.step(*now.fanSpeed / kRpmPerUnit, target / kRpmPerUnit, seconds, params.resumeDelay);
    return {.rule = Rule::Fan,
            .cap = cap,
            .reason = "fans " + text::shortNumber(std::round(*now.fanSpeed)) + " rpm, target " +
                      text::shortNumber(target) + " rpm"};
}

Hold WorkRules::profileHold(const Surroundings& now, const ControllerParams& params) {
    const double share = profileFor(params, now.presence).maxShare;
    if (share >= 1.0) {
        return {};
    }
    return {.rule = Rule::Profile,
            .cap = share,
            .reason = "at most " + percent(share) + " " + profileText(now.presence)};
}

Hold WorkRules::powerHold(const Surroundings& now, const ControllerParams& params, double seconds) {
    const bool saver = now.powerSaver && params.powerSaverIsBattery != 0;
    const bool active = now.onBattery || saver;
    const bool charged = now.batteryPercent < 0.0 || now.batteryPercent >= params.batteryMinCharge;
    const double cap = charged ? params.batteryCap : 0.0;
    std::string reason = now.onBattery ? "on battery" : "the power-saver profile is on";
    if (now.onBattery && now.batteryPercent >= 0.0) {
        reason += ", " + text::shortNumber(std::round(now.batteryPercent)) + "%";
        if (!charged && params.batteryCap > 0.0) {
            reason += ", under " + text::shortNumber(params.batteryMinCharge) + "%";
        }
    }
    const Rule rule = now.onBattery || !saver ? Rule::Battery : Rule::PowerSaver;
    return pausing(rule, m_power,
                   {.active = active,
                    .cap = cap,
                    .reason = std::move(reason),
                    .after = now.onBattery ? "on mains again" : "the power-saver profile is off again"},
                   seconds, params.resumeDelay);
}

Hold WorkRules::gameHold(const Surroundings& now, const ControllerParams& params, double seconds) {
    const bool one = now.games == 1;
    return pausing(Rule::Game, m_game,
                   {.active = now.games > 0 && params.gamesPause != 0,
                    .cap = 0.0,
                    .reason = one ? "a game is running" : std::to_string(now.games) + " games are running",
                    .after = one ? "the game ended" : "the games ended"},
                   seconds, params.resumeDelay);
}

Hold WorkRules::programHold(const Surroundings& now, const ControllerParams& params, double seconds) {
    const std::string names = nameList(now.programs);
    return pausing(Rule::Program, m_program,
                   {.active = !now.programs.empty(),
                    .cap = 0.0,
                    .reason = names + (now.programs.size() == 1 ? " is" : " are") + " running",
                    .after = names + " ended"},
                   seconds, params.resumeDelay);
}

Hold WorkRules::scheduleHold(const Surroundings& now, const ControllerParams& params) {
    const auto& hours = params.computeHours;
    if (!now.localTime || hours.always() || hours.allows(now.localTime->weekday, now.localTime->minute)) {
        return {};
    }
    const auto until = hours.minutesUntilChange(now.localTime->weekday, now.localTime->minute);
    return {.rule = Rule::Schedule,
            .cap = 0.0,
            .reason =
                "outside your computing hours (" + hours.text() + ")" +
                (until ? ", which begin in " + wallclock::durationText(std::chrono::minutes(*until)) : "")};
}

Hold WorkRules::memoryHold(const Surroundings& now, const ControllerParams& params, double seconds) {
    if (!now.memory) {
        m_memory.reset();
        m_memoryHold = {};
        return {};
    }
    m_memoryHold = m_memory.step(*now.memory, params.memoryStall, seconds, params.resumeDelay);
    if (m_memoryHold.stage == MemoryStage::Free) {
        return {};
    }
    return {.rule = Rule::Memory, .cap = m_memoryHold.cap, .reason = m_memoryHold.reason};
}

Hold WorkRules::step(const Surroundings& now, const ControllerParams& params, double seconds) {
    Hold holds[] = {
        temperatureHold(now, params, seconds),
        fanHold(now, params, seconds),
        powerHold(now, params, seconds),
        gameHold(now, params, seconds),
        programHold(now, params, seconds),
        profileHold(now, params),
        scheduleHold(now, params),
        memoryHold(now, params, seconds),
    };
    Hold tightest;
    for (auto& hold : holds) {
        if (hold.rule != Rule::None && hold.cap < tightest.cap) {
            tightest = std::move(hold);
        }
    }
    return tightest;
}

std::string holdText(const Hold& hold, double controllerQuota) {
    if (hold.rule == Rule::None || (hold.cap > 0.0 && hold.cap >= controllerQuota)) {
        return {};
    }
    return (hold.cap <= 0.0 ? std::string("paused: ") : "held to " + percent(hold.cap) + ": ") + hold.reason;
}

} // namespace nicer::control
