#pragma once

#include "api/Actuator.h"
#include "api/Boinc.h"
#include "api/BusNames.h"
#include "api/DownloadEntry.h"
#include "api/Placement.h"
#include "api/PresetInfo.h"
#include "api/Sample.h"
#include "control/Controller.h"
#include "control/ControllerParams.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nicer::api {

/// On the bus the signal is its keyword (control::kSignalKeywords); one a client does not know (a newer
/// nicerd's) reads as auto: nicerd's choice.
template <>
struct BusKeywords<control::Signal> {
    static constexpr const auto& keywords = control::kSignalKeywords;
    static constexpr control::Signal unknown = control::Signal::Auto;
};

/**
 * Everything nicerd shows of itself on the bus, as one value: the daemon builds it (DaemonControl::state),
 * its D-Bus service serves it, `nicer status` and the tray read it back. Each field is one property of
 * org.nicer.Daemon1, named alike (apiVersion is ApiVersion); the table in api/DaemonProperties.h says which
 * and how it is announced.
 *
 * The words: "foreground" is everything on the machine but the work (your programs, and other users and
 * services: the "outside" part); "background" is the work. The bus keeps the thesis's words, the
 * people-facing text says "your programs", "other users and services" and "the work".
 */
struct DaemonState {
    std::uint32_t apiVersion = kApiVersion;

    // The controller: its parameters, whether the work is paused, what it set in the last period.
    control::ControllerParams params;
    bool paused = false;
    /// When the volunteer's pause ends (a snooze), in µs since 1970 on the wall clock; 0: until they resume
    /// it, or not paused.
    std::uint64_t pausedUntilUSec = 0;
    double quota = 0.0;      ///< the work's cap in the last period, a share of the machine
    double multiplier = 1.0; ///< the reserve band's multiplier now
    std::uint32_t overloadCount = 0;
    double idle = 0.0;       ///< shares of the whole machine in the last period
    double foreground = 0.0; ///< everything but the work
    double background = 0.0; ///< the work
    double outside = -1.0;   ///< the part of foreground outside the user manager; -1: not known
    /// What the controller answered last: Machine or Outside.
    control::Signal signal = control::Signal::Machine;
    control::Signal signalSetting = control::Signal::Auto; ///< nicerd's --signal
    std::uint32_t cpuCount = 0;
    std::string lastError; ///< the loop's last error in plain words; empty when all is well

    // Where the work runs and how it is capped.
    Actuator actuator = Actuator::SystemdSlice;
    std::string actuatorNote; ///< why the actuator caps less well than it could, and what to do
    Placement placement = Placement::UserSlice;
    std::string placementNote;       ///< why it runs there, and what would protect everything
    double memoryMaxPercent = 100.0; ///< the memory limit as set, percent of the machine; 100: none
    std::uint64_t memoryMax = 0;     ///< the limit the kernel enforces, bytes; 0: none
    std::uint64_t memoryHigh = 0;    ///< the work's MemoryHigh for the profile in force, bytes; 0: none

    // The work.
    std::vector<std::string> workload; ///< its command
    bool demoWorkload = false;
    std::uint32_t instances = 0;
    std::uint32_t instancesRunning = 0; ///< of them, those that run now (the others frozen by the profile)
    std::uint32_t instancesStopped = 0; ///< of them, those the memory rule keeps stopped to free memory
    std::string workloadPreset;         ///< the running preset's id, or "custom"
    std::vector<PresetInfo> workloadPresets;

    // The downloads.
    std::vector<DownloadEntry> downloads; ///< in manifest order; empty without a manifest
    double downloadRate = 0.0;            ///< body bytes per second received now
    std::string bandwidthMode = "none";   ///< api::bandwidthKindKeyword
    std::uint64_t bandwidthCap = 0;       ///< bytes per second; 0: none

    BoincStatus boinc; ///< nicerd's BOINC client ("off" without one)

    // The volunteer's rules (control/WorkRules.h): which holds the work and why, and what they read.
    std::string heldBy; ///< the rule holding the work under the controller's quota (control::ruleName)
    std::string
        holdReason; ///< "held to 40%: CPU 82 °C, target 80 °C", "paused: on battery, 54%"; empty: none
    double temperature = kNoTemperature; ///< the CPU's, °C
    double temperatureTargetInUse = 0.0; ///< the target held now, °C (chosen from the sensor for 0); 0: none
    std::string temperatureSensor;       ///< "coretemp Package id 0 (/sys/class/hwmon/hwmon3/temp1_input)"
    std::string sensorNote;              ///< why the temperature rule is off; empty when it reads its sensor
    double fanSpeed = -1.0;              ///< the fastest fan's rpm; -1: no fan reports its speed
    bool onBattery = false;
    double batteryPercent = -1.0; ///< the display device's charge; -1: not known
    bool powerSaver = false;      ///< power-profiles-daemon's power-saver profile is on
    std::string powerSource;      ///< "UPower", the power_supply directory read instead, or "" (none)
    std::string powerNote;        ///< why the power is read from elsewhere, or not at all
    std::uint32_t games = 0;      ///< games registered with GameMode
    std::string gameNote;         ///< why games are not seen (no GameMode); empty when it answers
    std::vector<std::string> exclusivePrograms; ///< the named programs that pause the work
    std::vector<std::string> programsRunning;   ///< those of them that run now
    // The memory rule (control/MemoryLoop.h, daemon/MemoryWatch.h): what it read and how it holds the work.
    /// The share of the last period programs beside the work waited on memory; -1: not read (no memory rule)
    double memoryStallBeside = -1.0;
    std::string memoryStallWhere;      ///< the cgroup beside the work that waited most ("/user.slice/...")
    std::uint64_t workMemory = 0;      ///< the work's memory now, bytes (memory.current); 0: not read
    bool workCanSwap = false;          ///< the work's pages can leave memory (swap)
    std::string memoryHold;            ///< control::memoryStageName: "", "reclaiming", "frozen", "stopped"
    std::uint64_t memoryHoldLimit = 0; ///< the work's memory.high the rule set, bytes; 0: none
    std::string memoryHoldReason;      ///< what the rule read and does, in words; empty while it does nothing
    std::string memoryNote;    ///< why the rule reads or does less than it should; empty when all is well
    bool keepingAwake = false; ///< nicerd holds a sleep inhibitor now, logind's or the portal's (keep-awake)
    std::string sleepNote; ///< why the machine is kept awake, or may sleep, in words (daemon/SleepPolicy.h)

    // Whether the volunteer is at the machine (presence/PresenceWatch.h).
    control::Presence presence = control::Presence::Unknown;
    std::string presenceSource; ///< the source that answered: "XScreenSaver on :0"; empty: none did
    std::string presenceReason; ///< "no input for 3 min", "the screen is locked", or why it is not known
    /// Where the last input is published for BOINC (publish-input-time), or why not; empty while it is off.
    std::string inputTimeNote;

    bool operator==(const DaemonState&) const = default;
};

/// The bandwidth mode and cap as one value (how `nicer status` and the log say them).
BandwidthMode bandwidthOf(const DaemonState& state);

} // namespace nicer::api
