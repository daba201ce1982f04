#include "control/ParameterTable.h"

#include "control/ParameterText.h"

#include <algorithm>
#include <cmath>

namespace nicer::control {

namespace {

constexpr ParameterInfo kParameters[] = {
    {"reserve-band",
     "ReserveBand",
     "d",
     ParameterType::Real,
     "Reserve band",
     "Idle share of the whole machine kept in reserve for your programs, before the multiplier",
     "in (0, 0.5] (a fraction of the whole machine)",
     0.0,
     0.5,
     true,
     false,
     1.0,
     100.0,
     " %",
     0.5,
     50.0,
     0.5,
     1,
     false,
     [](const ControllerParams& p) { return p.reserveBand; },
     [](ControllerParams& p, double v) -> Result<void> {
         p.reserveBand = v;
         return {};
     }},
    {"min-multiplier",
     "MinMultiplier",
     "d",
     ParameterType::Real,
     "Min multiplier",
     "Smallest reserve-band multiplier: the steady-state idle reserve is min-multiplier x reserve-band",
     "in [1, 64] and at most max-multiplier",
     1.0,
     64.0,
     false,
     false,
     1.0,
     1.0,
     " x",
     1.0,
     64.0,
     0.5,
     1,
     false,
     [](const ControllerParams& p) { return p.minMultiplier; },
     [](ControllerParams& p, double v) -> Result<void> {
         p.minMultiplier = v;
         return {};
     }},
    {"max-multiplier",
     "MaxMultiplier",
     "d",
     ParameterType::Real,
     "Max multiplier",
     "Largest reserve-band multiplier: how far the band may widen while your programs keep the CPU busy",
     "in [1, 64] and at least min-multiplier",
     1.0,
     64.0,
     false,
     false,
     1.0,
     1.0,
     " x",
     1.0,
     64.0,
     0.5,
     1,
     false,
     [](const ControllerParams& p) { return p.maxMultiplier; },
     [](ControllerParams& p, double v) -> Result<void> {
         p.maxMultiplier = v;
         return {};
     }},
    {"overload-threshold",
     "OverloadThreshold",
     "u",
     ParameterType::Count,
     "Overload threshold",
     "Periods in a row with no idle CPU tolerated before the work is stopped (it stops on the next one)",
     ">= 0 (whole periods)",
     0.0,
     2147483647.0,
     false,
     false,
     1.0,
     1.0,
     " periods",
     0.0,
     60.0,
     1.0,
     0,
     false,
     [](const ControllerParams& p) { return static_cast<double>(p.overloadThreshold); },
     [](ControllerParams& p, double v) -> Result<void> {
         if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
             return Error{"overload-threshold = " + std::to_string(v) + " is not a whole number of periods"};
         }
         p.overloadThreshold = static_cast<int>(std::lround(v));
         return {};
     }},
    {"idle-epsilon",
     "IdleEpsilon",
     "d",
     ParameterType::Real,
     "No-idle threshold",
     "An idle share at or below this counts as no idle at all",
     "in [0, 0.5) (a fraction of the whole machine)",
     0.0,
     0.5,
     false,
     true,
     1.0,
     100.0,
     " %",
     0.0,
     49.0,
     0.5,
     1,
     false,
     [](const ControllerParams& p) { return p.idleEpsilon; },
     [](ControllerParams& p, double v) -> Result<void> {
         p.idleEpsilon = v;
         return {};
     }},
    {"period",
     "PeriodUSec",
     "t",
     ParameterType::Duration,
     "Period",
     "Seconds between two steps of the loop: how often nicerd measures and adjusts",
     "between 10 ms and 10 s",
     0.01,
     10.0,
     false,
     false,
     1e6,
     1000.0,
     " ms",
     10.0,
     10000.0,
     10.0,
     0,
     true,
     [](const ControllerParams& p) { return static_cast<double>(p.period.count()) / 1000.0; },
     [](ControllerParams& p, double v) -> Result<void> {
         auto period = periodFromSeconds(v);
         if (!period) {
             return period.error();
         }
         p.period = *period;
         return {};
     }},
};

} // namespace

std::span<const ParameterInfo> parameterTable() {
    return kParameters;
}

const ParameterInfo* findParameter(std::string_view key) {
    const auto* it = std::find_if(std::begin(kParameters), std::end(kParameters),
                                  [&](const ParameterInfo& p) { return key == p.key; });
    return it == std::end(kParameters) ? nullptr : it;
}

const ParameterInfo* findBusParameter(std::string_view busName) {
    const auto* it = std::find_if(std::begin(kParameters), std::end(kParameters),
                                  [&](const ParameterInfo& p) { return busName == p.busName; });
    return it == std::end(kParameters) ? nullptr : it;
}

std::string parameterNameList(bool bus) {
    std::string list;
    for (const auto& p : kParameters) {
        list += (list.empty() ? "" : ", ") + std::string(bus ? p.busName : p.key);
    }
    return list;
}

bool inRange(const ParameterInfo& info, double v) {
    // Written as "inside" tests so that NaN is outside.
    const bool aboveMin = info.minOpen ? v > info.min : v >= info.min;
    const bool belowMax = info.maxOpen ? v < info.max : v <= info.max;
    return aboveMin && belowMax;
}

std::string parameterHelp(const ParameterInfo& info) {
    return std::string(info.help) + ", " + info.range;
}

} // namespace nicer::control
