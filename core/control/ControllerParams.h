#pragma once

#include "control/WeeklyHours.h"
#include "util/Result.h"

#include <chrono>

namespace nicer::control {

/// Parameters of the starvation-detection controller of K. Seemakhupt, "Nicer CPU Scheduling and Bandwidth
/// Management for Volunteer Computing", master's thesis, Chulalongkorn University, 2015 (Figure 4); the
/// controller's exact semantics and defaults: docs/controller.md.
struct ControllerParams {
    /// Idle share of the whole machine kept in reserve, before the multiplier (b).
    double reserveBand = 0.05;
    /// Lower and upper bound of the reserve-band multiplier (m_min, m_max).
    double minMultiplier = 1.0;
    double maxMultiplier = 16.0;
    /// How fast the band shrinks back once there is idle again (d): each such period the multiplier falls
    /// to d·m, and by at least 1. 1 is the thesis's one step per period, which after an overload keeps a
    /// band of up to 80% for 15 periods; the default gives the CPU back within two.
    double multiplierDecay = 0.25;
    /// Consecutive no-idle periods tolerated before the work is stopped (T): it stops on the (T+1)th.
    int overloadThreshold = 4;
    /// A measured idle share at or below this counts as "no idle" (e).
    double idleEpsilon = 0.0;
    /// How often the loop samples and acts.
    std::chrono::milliseconds period{1000};

    // The volunteer's own limits (docs/user-guide.md, "Cool, quiet and charged"): rules that hold the work
    // under the controller's quota, or pause it, whatever idle time there is.
    // Two profiles (docs/user-guide.md, "Here or away"): these while you're here, or when nicer cannot tell,
    // and the away- ones while you're away.
    /// The CPU temperature the work may heat the machine to, in °C; 0: chosen from the sensor's own limits
    /// (control/WorkRules.h, resolveTemperatureTarget), 10 °C cooler while you're here.
    double temperatureTarget = 0.0;
    double awayTemperatureTarget = 0.0;
    /// The fan speed the work may drive the fans to, in rpm; 0: no fan rule.
    double fanTarget = 0.0;
    double awayFanTarget = 0.0;
    /// The largest share of the machine the work may use, whatever the controller would give it.
    double maxShare = 1.0;
    double awayMaxShare = 1.0;
    /// The largest share of the machine's memory the work may keep before the kernel reclaims its pages first
    /// (the work's MemoryHigh), never above what memory-max sets (the fence nicerd is started with): the
    /// fence by default, here and away, since the memory rule (memoryStall) takes the work's memory when a
    /// program needs it; a static quarter cost a large work most of its throughput for a program that
    /// might never come (docs/benchmarks.md, "nicerd as installed").
    double memoryShare = 1.0;
    double awayMemoryShare = 1.0;
    /// How many of the work's instances run (workload::WorkloadSupervisor::limitRunning): the others are
    /// frozen, keeping their memory and progress; 0: all of them.
    int maxInstances = 0;
    int awayMaxInstances = 0;
    /// The share of time programs beside the work may wait on memory (PSI's "some") before the memory rule
    /// takes memory from the work (control/MemoryLoop.h); 0: no memory rule.
    double memoryStall = 0.01;
    /// Seconds a rule waits before it gives the work back: after a temperature trip, once on mains again,
    /// after the last game or named program ended.
    double resumeDelay = 60.0;
    /// On battery, the work's cap as a share of the machine; 0: the work pauses on battery.
    double batteryCap = 0.0;
    /// On battery with less charge than this (percent), the work pauses whatever battery-cap says.
    double batteryMinCharge = 50.0;
    /// 1: power-profiles-daemon's power-saver profile counts as battery; 0: it does not.
    int powerSaverIsBattery = 1;
    /// 1: while the work runs on mains power, nicerd keeps the machine from sleeping on its idle timer (a
    /// logind sleep inhibitor); 0: the machine sleeps as it would without nicer.
    int keepAwake = 0;
    /// 1: a game that runs with GameMode pauses the work; 0: it does not.
    int gamesPause = 1;
    /// 1: BOINC's elapsed-time clock is kept as fast as its tasks run (daemon/BoincClock.h), so that BOINC
    /// never aborts a task nicer slows; 0: BOINC counts the wall clock, as it does alone.
    int boincClock = 1;
    /// Seconds without input after which the volunteer counts as away (BOINC's "in use" delay, 3 minutes);
    /// input makes them here again at once (presence/PresenceWatch.h).
    double awayDelay = 180.0;
    /// 1: nicerd sets logind's idle hint of the volunteer's graphical session from its own verdict, for
    /// programs that read only logind's (Folding@home); 0: it leaves the hint to the desktop.
    int logindIdleHint = 0;
    /// 1: nicerd publishes the time of the volunteer's last input in BOINC's /idle_detect_shmem, for a
    /// system-wide BOINC client (presence/IdleDetectShmem.h); 0: it does not.
    int publishInputTime = 0;
    /// The hours of the week the work may run (BOINC's computing hours), and its downloads (its network
    /// hours); outside them the work is paused, and the downloads wait (docs/user-guide.md, "Schedules and
    /// snoozes").
    WeeklyHours computeHours{};
    WeeklyHours transferHours{};

    bool operator==(const ControllerParams&) const = default;
};

/// The lowest temperature-target besides 0: an idle CPU in a warm room runs at 35-45 °C, so a lower target
/// would hold the work at nothing.
inline constexpr double kLowestTemperatureTarget = 40.0;

/// Checks every parameter against its range in parameterTable() (control/ParameterTable.h) and that
/// min-multiplier <= max-multiplier and temperature-target is 0 or at least kLowestTemperatureTarget; the
/// error names the first parameter out of range and its allowed range.
Result<void> validate(const ControllerParams& params);

} // namespace nicer::control
