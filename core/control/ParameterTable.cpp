#include "control/ParameterTable.h"

#include "control/ParameterText.h"
#include "util/Text.h"

#include <algorithm>
#include <cmath>

namespace nicer::control {

namespace {

constexpr ParameterInfo kParameters[] = {
    {
        .key = "reserve-band",
        .busName = "ReserveBand",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Reserve band",
        .help = "Idle share of the whole machine kept in reserve for your programs, before the multiplier",
        .rangeNote = "(a fraction of the whole machine)",
        .min = 0.0,
        .max = 0.5,
        .minOpen = true,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 100.0,
        .displayUnit = " %",
        .sliderMin = 0.5,
        .sliderMax = 50.0,
        .displayStep = 0.5,
        .displayDecimals = 1,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.reserveBand; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.reserveBand = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = false,
        .group = ParameterGroup::Controller,
    },
    {
        .key = "min-multiplier",
        .busName = "MinMultiplier",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Min multiplier",
        .help = "Smallest reserve-band multiplier: the steady-state idle reserve is min-multiplier x "
                "reserve-band",
        .rangeNote = "and at most max-multiplier",
        .min = 1.0,
        .max = 64.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " x",
        .sliderMin = 1.0,
        .sliderMax = 64.0,
        .displayStep = 0.5,
        .displayDecimals = 1,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.minMultiplier; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.minMultiplier = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = false,
        .group = ParameterGroup::Controller,
    },
    {
        .key = "max-multiplier",
        .busName = "MaxMultiplier",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Max multiplier",
        .help = "Largest reserve-band multiplier: how far the band may widen while your programs keep the "
                "CPU busy",
        .rangeNote = "and at least min-multiplier",
        .min = 1.0,
        .max = 64.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " x",
        .sliderMin = 1.0,
        .sliderMax = 64.0,
        .displayStep = 0.5,
        .displayDecimals = 1,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.maxMultiplier; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.maxMultiplier = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = false,
        .group = ParameterGroup::Controller,
    },
    {
        .key = "multiplier-decay",
        .busName = "MultiplierDecay",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Band decay",
        .help = "How fast a widened band shrinks once there is idle CPU again: each period the multiplier "
                "falls to multiplier-decay x itself, and by at least 1 (1: one step per period, as in the "
                "thesis)",
        .rangeNote = "",
        .min = 0.0,
        .max = 1.0,
        .minOpen = true,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " x",
        .sliderMin = 0.05,
        .sliderMax = 1.0,
        .displayStep = 0.05,
        .displayDecimals = 2,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.multiplierDecay; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.multiplierDecay = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Controller,
    },
    {
        .key = "overload-threshold",
        .busName = "OverloadThreshold",
        .busSignature = "u",
        .type = ParameterType::Count,
        .label = "Overload threshold",
        .help = "Periods in a row with no idle CPU tolerated before the work is stopped (it stops on the "
                "next one)",
        .rangeNote = "(whole periods)",
        .min = 0.0,
        .max = kUnbounded,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " periods",
        .sliderMin = 0.0,
        .sliderMax = 60.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return static_cast<double>(p.overloadThreshold); },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
                return Error{"overload-threshold = " + std::to_string(v) +
                                 " is not a whole number of periods",
                             ErrorKind::InvalidInput};
            }
            p.overloadThreshold = static_cast<int>(std::lround(v));
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = false,
        .group = ParameterGroup::Controller,
    },
    {
        .key = "idle-epsilon",
        .busName = "IdleEpsilon",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "No-idle threshold",
        .help = "An idle share at or below this counts as no idle at all",
        .rangeNote = "(a fraction of the whole machine)",
        .min = 0.0,
        .max = 0.5,
        .minOpen = false,
        .maxOpen = true,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 100.0,
        .displayUnit = " %",
        .sliderMin = 0.0,
        .sliderMax = 49.0,
        .displayStep = 0.5,
        .displayDecimals = 1,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.idleEpsilon; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.idleEpsilon = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = false,
        .group = ParameterGroup::Controller,
    },
    {
        .key = "period",
        .busName = "PeriodUSec",
        .busSignature = "t",
        .type = ParameterType::Duration,
        .label = "Period",
        .help = "Seconds between two steps of the loop: how often nicerd measures and adjusts",
        .rangeNote = "",
        .min = 0.01,
        .max = 10.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1e6,
        .displayScale = 1000.0,
        .displayUnit = " ms",
        .sliderMin = 10.0,
        .sliderMax = 10000.0,
        .displayStep = 10.0,
        .displayDecimals = 0,
        .logarithmic = true,
        .get = [](const ControllerParams& p) { return static_cast<double>(p.period.count()) / 1000.0; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            auto period = periodFromSeconds(v);
            if (!period) {
                return period.error();
            }
            p.period = *period;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = false,
        .group = ParameterGroup::Controller,
    },
    {
        .key = "temperature-target",
        .busName = "TemperatureTarget",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Temperature while here",
        .help = "While you're here (or nicer cannot tell): the CPU temperature the work may heat the machine "
                "to, in °C (0: chosen from the sensor's own limits, at most 70 °C)",
        .rangeNote = "(°C; 0, or at least 40)",
        .min = 0.0,
        .max = 105.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = kLowestTemperatureTarget,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " °C",
        .sliderMin = 0.0,
        .sliderMax = 105.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.temperatureTarget; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.temperatureTarget = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "away-temperature-target",
        .busName = "AwayTemperatureTarget",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Temperature while away",
        .help = "While you're away: the CPU temperature the work may heat the machine to, in °C (0: chosen "
                "from the sensor's own limits, at most 80 °C)",
        .rangeNote = "(°C; 0, or at least 40)",
        .min = 0.0,
        .max = 105.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = kLowestTemperatureTarget,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " °C",
        .sliderMin = 0.0,
        .sliderMax = 105.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.awayTemperatureTarget; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.awayTemperatureTarget = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "fan-target",
        .busName = "FanTarget",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Fan speed while here",
        .help = "While you're here (or nicer cannot tell): the fan speed the work may drive the fans to, in "
                "rpm (0: no fan rule)",
        .rangeNote = "(rpm; 0: none)",
        .min = 0.0,
        .max = 20000.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " rpm",
        .sliderMin = 0.0,
        .sliderMax = 6000.0,
        .displayStep = 100.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.fanTarget; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.fanTarget = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "away-fan-target",
        .busName = "AwayFanTarget",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Fan speed while away",
        .help = "While you're away: the fan speed the work may drive the fans to, in rpm (0: no fan rule)",
        .rangeNote = "(rpm; 0: none)",
        .min = 0.0,
        .max = 20000.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " rpm",
        .sliderMin = 0.0,
        .sliderMax = 6000.0,
        .displayStep = 100.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.awayFanTarget; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.awayFanTarget = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "max-share",
        .busName = "MaxShare",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Largest share while here",
        .help =
            "While you're here (or nicer cannot tell): the largest share of the machine the work may use, "
            "whatever idle CPU there is",
        .rangeNote = "(a fraction of the whole machine)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = true,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 100.0,
        .displayUnit = " %",
        .sliderMin = 5.0,
        .sliderMax = 100.0,
        .displayStep = 5.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.maxShare; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.maxShare = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "away-max-share",
        .busName = "AwayMaxShare",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Largest share while away",
        .help = "While you're away: the largest share of the machine the work may use, whatever idle CPU "
                "there is",
        .rangeNote = "(a fraction of the whole machine)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = true,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 100.0,
        .displayUnit = " %",
        .sliderMin = 5.0,
        .sliderMax = 100.0,
        .displayStep = 5.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.awayMaxShare; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.awayMaxShare = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "memory-share",
        .busName = "MemoryShare",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Memory while here",
        .help = "While you're here (or nicer cannot tell): the largest share of the machine's memory the "
                "work may "
                "keep before the kernel reclaims its pages first; never above memory-max's own",
        .rangeNote = "(a fraction of the machine's memory)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = true,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 100.0,
        .displayUnit = " %",
        .sliderMin = 5.0,
        .sliderMax = 100.0,
        .displayStep = 5.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.memoryShare; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.memoryShare = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "away-memory-share",
        .busName = "AwayMemoryShare",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Memory while away",
        .help = "While you're away: the largest share of the machine's memory the work may keep before the "
                "kernel "
                "reclaims its pages first; never above memory-max's own",
        .rangeNote = "(a fraction of the machine's memory)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = true,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 100.0,
        .displayUnit = " %",
        .sliderMin = 5.0,
        .sliderMax = 100.0,
        .displayStep = 5.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.awayMemoryShare; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.awayMemoryShare = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "memory-stall",
        .busName = "MemoryStall",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Memory stall allowed",
        .help = "The share of time programs beside the work may wait on memory before the work gives memory "
                "back: its pages reclaimed first, then frozen, then instances stopped (0: no memory rule)",
        .rangeNote = "(a fraction of the time, PSI's some)",
        .min = 0.0,
        .max = 0.5,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 100.0,
        .displayUnit = " %",
        .sliderMin = 0.0,
        .sliderMax = 10.0,
        .displayStep = 0.5,
        .displayDecimals = 1,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.memoryStall; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.memoryStall = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Rules,
    },
    {
        .key = "max-instances",
        .busName = "MaxInstances",
        .busSignature = "u",
        .type = ParameterType::Count,
        .label = "Instances while here",
        .help =
            "While you're here (or nicer cannot tell): how many of the work's instances run; the others are "
            "frozen, keeping their memory and progress (0: all)",
        .rangeNote = "(instances; 0: all)",
        .min = 0.0,
        .max = 1024.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = "",
        .sliderMin = 0.0,
        .sliderMax = 16.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return static_cast<double>(p.maxInstances); },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
                return Error{"max-instances = " + std::to_string(v) + " is not a whole number of instances",
                             ErrorKind::InvalidInput};
            }
            p.maxInstances = static_cast<int>(std::lround(v));
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "away-max-instances",
        .busName = "AwayMaxInstances",
        .busSignature = "u",
        .type = ParameterType::Count,
        .label = "Instances while away",
        .help =
            "While you're away: how many of the work's instances run; the others are frozen, keeping their "
            "memory and progress (0: all)",
        .rangeNote = "(instances; 0: all)",
        .min = 0.0,
        .max = 1024.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = "",
        .sliderMin = 0.0,
        .sliderMax = 16.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return static_cast<double>(p.awayMaxInstances); },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
                return Error{"away-max-instances = " + std::to_string(v) +
                                 " is not a whole number of instances",
                             ErrorKind::InvalidInput};
            }
            p.awayMaxInstances = static_cast<int>(std::lround(v));
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "resume-delay",
        .busName = "ResumeDelay",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Resume delay",
        .help = "Seconds a rule waits before it gives the work back: after a temperature trip, once on mains "
                "again, after the last game or named program ended",
        .rangeNote = "(seconds)",
        .min = 0.0,
        .max = 3600.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " s",
        .sliderMin = 0.0,
        .sliderMax = 600.0,
        .displayStep = 5.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.resumeDelay; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.resumeDelay = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Rules,
    },
    {
        .key = "battery-cap",
        .busName = "BatteryCap",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Cap on battery",
        .help = "The work's share of the machine while on battery (0: the work pauses on battery)",
        .rangeNote = "(a fraction of the whole machine)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 100.0,
        .displayUnit = " %",
        .sliderMin = 0.0,
        .sliderMax = 100.0,
        .displayStep = 5.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.batteryCap; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.batteryCap = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Rules,
    },
    {
        .key = "battery-min-charge",
        .busName = "BatteryMinCharge",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Least charge",
        .help =
            "On battery with less charge than this, in percent, the work pauses whatever battery-cap says",
        .rangeNote = "(percent)",
        .min = 0.0,
        .max = 100.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " %",
        .sliderMin = 0.0,
        .sliderMax = 100.0,
        .displayStep = 5.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return p.batteryMinCharge; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.batteryMinCharge = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Rules,
    },
    {
        .key = "power-saver-is-battery",
        .busName = "PowerSaverIsBattery",
        .busSignature = "u",
        .type = ParameterType::Count,
        .label = "Power saver as battery",
        .help = "Whether power-profiles-daemon's power-saver profile counts as running on battery",
        .rangeNote = "(1: yes, 0: no)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = "",
        .sliderMin = 0.0,
        .sliderMax = 1.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return static_cast<double>(p.powerSaverIsBattery); },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
                return Error{"power-saver-is-battery = " + std::to_string(v) + " is not 0 or 1",
                             ErrorKind::InvalidInput};
            }
            p.powerSaverIsBattery = static_cast<int>(std::lround(v));
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Rules,
    },
    {
        .key = "keep-awake",
        .busName = "KeepAwake",
        .busSignature = "u",
        .type = ParameterType::Count,
        .label = "Keep awake on mains",
        .help = "Whether the machine stays awake while the work runs on mains power (a logind sleep "
                "inhibitor), or sleeps as it would without nicer",
        .rangeNote = "(1: yes, 0: no)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = "",
        .sliderMin = 0.0,
        .sliderMax = 1.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return static_cast<double>(p.keepAwake); },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
                return Error{"keep-awake = " + std::to_string(v) + " is not 0 or 1", ErrorKind::InvalidInput};
            }
            p.keepAwake = static_cast<int>(std::lround(v));
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Rules,
    },
    {
        .key = "games-pause",
        .busName = "GamesPause",
        .busSignature = "u",
        .type = ParameterType::Count,
        .label = "Pause for games",
        .help = "Whether a game that runs with GameMode pauses the work",
        .rangeNote = "(1: yes, 0: no)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = "",
        .sliderMin = 0.0,
        .sliderMax = 1.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return static_cast<double>(p.gamesPause); },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
                return Error{"games-pause = " + std::to_string(v) + " is not 0 or 1",
                             ErrorKind::InvalidInput};
            }
            p.gamesPause = static_cast<int>(std::lround(v));
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Rules,
    },
    {
        .key = "boinc-clock",
        .busName = "KeepBoincClock",
        .busSignature = "u",
        .type = ParameterType::Count,
        .label = "Keep BOINC's clock",
        .help =
            "Whether BOINC's elapsed-time clock is kept as fast as its tasks run, so that BOINC never aborts "
            "a task nicer slows (its client, not its tasks, stops for 15 s at a time)",
        .rangeNote = "(1: yes, 0: no)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = "",
        .sliderMin = 0.0,
        .sliderMax = 1.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return static_cast<double>(p.boincClock); },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
                return Error{"boinc-clock = " + std::to_string(v) + " is not 0 or 1",
                             ErrorKind::InvalidInput};
            }
            p.boincClock = static_cast<int>(std::lround(v));
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Rules,
    },
    {
        .key = "away-delay",
        .busName = "AwayDelay",
        .busSignature = "d",
        .type = ParameterType::Real,
        .label = "Away after",
        .help = "Seconds without keyboard or mouse input after which you count as away; input makes you here "
                "again at once",
        .rangeNote = "(seconds)",
        .min = 1.0,
        .max = 86400.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = " s",
        .sliderMin = 10.0,
        .sliderMax = 1800.0,
        .displayStep = 10.0,
        .displayDecimals = 0,
        .logarithmic = true,
        .get = [](const ControllerParams& p) { return p.awayDelay; },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            p.awayDelay = v;
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "logind-idle-hint",
        .busName = "LogindIdleHint",
        .busSignature = "u",
        .type = ParameterType::Count,
        .label = "Tell logind when you're away",
        .help =
            "Whether nicerd sets logind's idle hint of your graphical session as it finds you here or away, "
            "for programs that read only logind's (Folding@home's \"only when idle\") on desktops that "
            "never set it",
        .rangeNote = "(1: yes, 0: no)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = "",
        .sliderMin = 0.0,
        .sliderMax = 1.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return static_cast<double>(p.logindIdleHint); },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
                return Error{"logind-idle-hint = " + std::to_string(v) + " is not 0 or 1",
                             ErrorKind::InvalidInput};
            }
            p.logindIdleHint = static_cast<int>(std::lround(v));
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "publish-input-time",
        .busName = "PublishInputTime",
        .busSignature = "u",
        .type = ParameterType::Count,
        .label = "Tell BOINC when you're away",
        .help = "Whether nicerd publishes the time of your last input in /dev/shm/idle_detect_shmem, where a "
                "system-wide BOINC client (8.2.10 and later) reads its \"in use\", on every desktop",
        .rangeNote = "(1: yes, 0: no)",
        .min = 0.0,
        .max = 1.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = "",
        .sliderMin = 0.0,
        .sliderMax = 1.0,
        .displayStep = 1.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = [](const ControllerParams& p) { return static_cast<double>(p.publishInputTime); },
        .set = [](ControllerParams& p, double v) -> Result<void> {
            if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
                return Error{"publish-input-time = " + std::to_string(v) + " is not 0 or 1",
                             ErrorKind::InvalidInput};
            }
            p.publishInputTime = static_cast<int>(std::lround(v));
            return {};
        },
        .getText = nullptr,
        .setText = nullptr,
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Profiles,
    },
    {
        .key = "compute-hours",
        .busName = "ComputeHours",
        .busSignature = "s",
        .type = ParameterType::Hours,
        .label = "Computing hours",
        .help = "The hours of the week the work may run, as BOINC's computing hours: any, 18:00-08:00, or "
                "\"mon-fri 18:00-08:00; sat,sun any\"; outside them it is paused",
        .rangeNote = "",
        .min = 0.0,
        .max = 0.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = "",
        .sliderMin = 0.0,
        .sliderMax = 0.0,
        .displayStep = 0.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = nullptr,
        .set = nullptr,
        .getText = [](const ControllerParams& p) { return p.computeHours.text(); },
        .setText = [](ControllerParams& p, std::string_view text) -> Result<void> {
            auto hours = WeeklyHours::parse(text);
            if (!hours) {
                return hours.error().within("compute-hours: ");
            }
            p.computeHours = std::move(*hours);
            return {};
        },
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Schedule,
    },
    {
        .key = "transfer-hours",
        .busName = "TransferHours",
        .busSignature = "s",
        .type = ParameterType::Hours,
        .label = "Transfer hours",
        .help = "The hours of the week the work's downloads may run, as BOINC's network hours, written as "
                "compute-hours; outside them they wait",
        .rangeNote = "",
        .min = 0.0,
        .max = 0.0,
        .minOpen = false,
        .maxOpen = false,
        .lowestAboveZero = 0.0,
        .busScale = 1.0,
        .displayScale = 1.0,
        .displayUnit = "",
        .sliderMin = 0.0,
        .sliderMax = 0.0,
        .displayStep = 0.0,
        .displayDecimals = 0,
        .logarithmic = false,
        .get = nullptr,
        .set = nullptr,
        .getText = [](const ControllerParams& p) { return p.transferHours.text(); },
        .setText = [](ControllerParams& p, std::string_view text) -> Result<void> {
            auto hours = WeeklyHours::parse(text);
            if (!hours) {
                return hours.error().within("transfer-hours: ");
            }
            p.transferHours = std::move(*hours);
            return {};
        },
        .newerThanSavedFiles = true,
        .group = ParameterGroup::Schedule,
    },
};

} // namespace

std::span<const ParameterInfo> parameterTable() {
    return kParameters;
}

bool sameValue(const ParameterInfo& info, const ControllerParams& a, const ControllerParams& b) {
    return info.type == ParameterType::Hours ? info.getText(a) == info.getText(b)
                                             : info.get(a) == info.get(b);
}

void copyValue(const ParameterInfo& info, const ControllerParams& from, ControllerParams& to) {
    // The value came from a ControllerParams, so it can be stored again.
    if (info.type == ParameterType::Hours) {
        (void)info.setText(to, info.getText(from));
    } else {
        (void)info.set(to, info.get(from));
    }
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
    const bool notInGap = !(v > 0.0 && v < info.lowestAboveZero);
    return aboveMin && belowMax && notInGap;
}

namespace {

/// A duration in seconds as people write it: "10 ms", "10 s".
std::string duration(double seconds) {
    return seconds < 1.0 ? text::shortNumber(seconds * 1000.0) + " ms" : text::shortNumber(seconds) + " s";
}

} // namespace

std::string rangeText(const ParameterInfo& info) {
    if (info.type == ParameterType::Hours) {
        return "hours of the week as days and HH:MM-HH:MM, any or none";
    }
    std::string text;
    if (info.max >= kUnbounded) {
        text = (info.minOpen ? "> " : ">= ") + text::shortNumber(info.min);
    } else if (info.type == ParameterType::Duration && !info.minOpen && !info.maxOpen) {
        text = "between " + duration(info.min) + " and " + duration(info.max);
    } else {
        text = "in " + std::string(info.minOpen ? "(" : "[") + text::shortNumber(info.min) + ", " +
               text::shortNumber(info.max) + (info.maxOpen ? ")" : "]");
    }
    if (*info.rangeNote != '\0') {
        text += std::string(" ") + info.rangeNote;
    }
    return text;
}

std::string parameterHelp(const ParameterInfo& info) {
    return std::string(info.help) + ", " + rangeText(info);
}

} // namespace nicer::control
