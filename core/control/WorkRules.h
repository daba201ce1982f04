#pragma once

#include "control/ControllerParams.h"
#include "control/MemoryLoop.h"
#include "control/Presence.h"
#include "control/TargetLoop.h"
#include "util/WallClock.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::control {

/// What the volunteer's machine says in one period, gathered by nicerd from its sensors and the desktop.
struct Surroundings {
    std::optional<double> temperature; ///< the CPU's, °C; none without a sensor
    double temperatureTarget = 0.0;    ///< °C, resolved (resolveTemperatureTarget)
    std::optional<double> fanSpeed;    ///< the fastest fan's, rpm; none without a fan sensor
    bool onBattery = false;
    double batteryPercent = -1.0;          ///< -1: not known
    bool powerSaver = false;               ///< power-profiles-daemon's power-saver profile is active
    int games = 0;                         ///< games registered with GameMode
    std::vector<std::string> programs;     ///< the named programs that run
    Presence presence = Presence::Unknown; ///< whether the volunteer is at the machine
    /// The local time, for the schedule; none: not known (the schedule does not hold).
    std::optional<wallclock::LocalMinute> localTime;
    /// The memory pressure beside the work and the work's memory; none: not read (no memory rule).
    std::optional<MemoryReading> memory;
};

/// The volunteer's rules, each of which can hold the work under the controller's quota.
enum class Rule { None, Temperature, Fan, Battery, PowerSaver, Game, Program, Profile, Schedule, Memory };

/// "temperature", "fan", "battery", "power-saver", "game", "program", "profile", "schedule", "memory"; "" for
/// None. The bus and the chart use these words.
std::string_view ruleName(Rule rule);

/// The tightest rule in a period: the cap it sets and why, in plain words ("CPU 82 °C, target 80 °C",
/// "on battery, 54%", "a game is running").
struct Hold {
    Rule rule = Rule::None;
    double cap = 1.0; ///< 0..1 of the machine; 0: the work pauses
    std::string reason;
};

/// The settings that depend on whether you are at the machine: the away ones while you're away, the others
/// while you're here and when nicer cannot tell (the side that asks least of the machine).
struct Profile {
    Presence presence = Presence::Unknown;
    double temperatureTarget = 0.0; ///< °C as set; 0: chosen from the sensor (resolveTemperatureTarget)
    double fanTarget = 0.0;         ///< rpm; 0: no fan rule
    double maxShare = 1.0;          ///< the largest share of the machine the work may use
    double memoryShare = 1.0; ///< the largest share of the machine's memory the work may keep (MemoryHigh)
    int maxInstances = 0;     ///< how many of the work's instances run; 0: all
};

Profile profileFor(const ControllerParams& params, Presence presence);

/// "while you're here", "while you're away", "while nicer cannot tell whether you're here".
std::string profileText(Presence presence);

/// How much cooler the chosen temperature target is while you're here: a working CPU that stays at 70 °C
/// keeps most laptops' fans near their quietest.
inline constexpr double kHereCooler = 10.0;

/**
 * The target the temperature rule holds, in °C: @p param (temperature-target) when it is not 0, else 80 °C
 * (70 °C, kHereCooler lower, when @p here), lowered to 10 °C under the sensor's @p max and 20 °C under its
 * @p crit where it has them, and never under kLowestTemperatureTarget. 80 °C is where laptops' fans usually
 * still run quietly and well under the throttling point (Intel's TjMax is 100 °C, AMD's Tctl limit 95 °C);
 * docs/user-guide.md explains it.
 */
double resolveTemperatureTarget(double param, std::optional<double> max, std::optional<double> crit,
                                bool here = false);

/**
 * The volunteer's own limits, beside the controller: the temperature and fan targets (each a TargetLoop),
 * the battery (paused, or capped above a charge), power-profiles-daemon's power-saver profile, games
 * (GameMode), named programs, the largest share of the profile in force (here or away), and the computing
 * hours of the schedule (compute-hours: outside them the work pauses, from the hour's edge). The work's quota
 * is the controller's, or the tightest rule's cap where that is lower. A rule that paused the work keeps it
 * paused for resume-delay after its cause ended. Pure: fed what the machine says, one period at a time.
 */
class WorkRules {
public:
    /// One period of @p seconds; the tightest hold (the lowest cap; on a tie the earlier rule of Rule's
    /// order), or Rule::None with cap 1.
    Hold step(const Surroundings& now, const ControllerParams& params, double seconds);
    /// Each rule starts over (nicerd's work restarted).
    void reset() { *this = WorkRules(); }
    /// The memory rule's hold in the last step: its memory limit, reclaim and stopped instances as well as
    /// its CPU cap (which step() weighs with the others).
    const MemoryHold& memory() const { return m_memoryHold; }
    /// The memory rule at once, between periods (MemoryLoop::urgent): its hold, kept for memory() too.
    const MemoryHold& memoryNow(const MemoryReading& now, const ControllerParams& params) {
        m_memoryHold = m_memory.urgent(now, params.memoryStall);
        return m_memoryHold;
    }

private:
    /// A pausing rule's wait after its cause ended.
    struct Wait {
        double left = 0.0;
        double cap = 1.0;
        std::string what; ///< "on mains again", "the game ended", "blender ended"
    };
    /// What a pausing rule sees in a period: whether its cause is there, the cap it sets then and why, and
    /// what its wait says once the cause ended.
    struct Cause {
        bool active = false;
        double cap = 0.0;
        std::string reason; ///< "on battery, 54%", "a game is running"
        std::string after;  ///< "on mains again", "the game ended"
    };
    /// The hold of a rule with @p cause this period, keeping @p wait for resume-delay after the cause ended.
    static Hold pausing(Rule rule, Wait& wait, Cause cause, double seconds, double resumeDelay);
    Hold temperatureHold(const Surroundings& now, const ControllerParams& params, double seconds);
    Hold fanHold(const Surroundings& now, const ControllerParams& params, double seconds);
    Hold powerHold(const Surroundings& now, const ControllerParams& params, double seconds);
    Hold gameHold(const Surroundings& now, const ControllerParams& params, double seconds);
    Hold programHold(const Surroundings& now, const ControllerParams& params, double seconds);
    static Hold profileHold(const Surroundings& now, const ControllerParams& params);
    static Hold scheduleHold(const Surroundings& now, const ControllerParams& params);
    Hold memoryHold(const Surroundings& now, const ControllerParams& params, double seconds);

    TargetLoop m_temperature;
    TargetLoop m_fan;
    Wait m_power;
    Wait m_game;
    Wait m_program;
    MemoryLoop m_memory;
    MemoryHold m_memoryHold;
};

/// What `nicer status`, the tray and nicerd's log say of a hold given the controller's own quota:
/// "held to 40%: CPU 82 °C, target 80 °C", "paused: on battery, 54%"; empty when the hold does not hold the
/// work under @p controllerQuota.
std::string holdText(const Hold& hold, double controllerQuota);

} // namespace nicer::control
