#pragma once

#include "api/DaemonState.h"
#include "control/ControllerParams.h"
#include "control/WorkRules.h"
#include "daemon/DaemonConfig.h"
#include "desktop/GameWatch.h"
#include "desktop/PowerWatch.h"
#include "desktop/ProgramWatch.h"
#include "kernel/Hwmon.h"
#include "libsystemd/Connection.h"
#include "libsystemd/Event.h"
#include "libsystemd/Timer.h"
#include "presence/IdleDetectShmem.h"
#include "presence/LastInput.h"
#include "presence/PresenceWatch.h"
#include "util/Result.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nicer::daemon {

/**
 * Where the volunteer's rules (control/WorkRules.h) read the machine: the CPU's temperature sensor and the
 * fans (hwmon, thermal zones), the power (UPower, power-profiles-daemon, or /sys/class/power_supply),
 * GameMode on the session bus, the named programs in /proc, and whether the volunteer is at the machine
 * (presence/PresenceWatch.h). Each source that is missing says so in its note and its rule stays out of the
 * way; none of them stops nicerd. Only what the volunteer named wrongly does: a --temperature-sensor that is
 * not a sensor, a program name that cannot be one.
 */
class RuleSources {
public:
    /// On nicerd's loop @p event; @p changed is called from the loop when the power or the games changed (the
    /// rules then hold the work from the next period on, or sooner where the caller acts at once).
    static Result<std::unique_ptr<RuleSources>> create(sd_event* event, const DaemonConfig& config,
                                                       std::function<void()> changed);

    /// Once per period: what the rules see now, with the temperature target of @p params resolved against
    /// the sensor's own limits. The temperature and the fans' speed are the means of kSensorSamples readings
    /// spread over the period: under a bandwidth window as long as the period the work heats in a burst at
    /// its start, and a reading at the period's start alone would find the machine at its coolest.
    control::Surroundings read(const control::ControllerParams& params);
    /// Publishes the volunteer's last input for BOINC (publish-input-time), once a period after read().
    void publishInputTime(const control::ControllerParams& params);
    /// Whether the volunteer was at the machine at the last read().
    control::Presence lastPresence() const { return m_last.presence; }
    /// Their part of the daemon's state: the readings, the sources and their notes.
    void describe(api::DaemonState& state) const;
    /// The named programs from the next read() on (each checked: desktop::checkProgramList).
    void setPrograms(std::vector<std::string> names) { m_programs.setNames(std::move(names)); }

    static constexpr int kSensorSamples = 4;

private:
    /// Readings of one sensor taken within a period, for their mean.
    struct Samples {
        double sum = 0.0;
        int count = 0;
        void add(double value) {
            sum += value;
            ++count;
        }
        /// Their mean, and empty again; none without a reading.
        std::optional<double> take();
    };
    /// One more reading of the temperature sensor and the fans.
    void sampleSensors();

    RuleSources(sd_event* event, const DaemonConfig& config, std::function<void()> changed)
        : m_changed(std::move(changed))
        , m_sessionBus(
              event, libsystemd::BusTarget::user(),
              {.connected = [this](sd_bus* bus) { return watchSession(bus); }, .lost = {}, .onError = {}})
        , m_programs(config.procDir)
        , m_inputTimeName(config.inputTimeObject) {}
    /// The temperature sensor (the one given, or the CPU's found) and the fans.
    Result<void> findSensors(const DaemonConfig& config);
    /// GameMode and GNOME's idle monitor on the session bus: connects (again, after the bus restarted), and
    /// watchSession(bus) watches.
    void watchSession();
    Result<void> watchSession(sd_bus* bus);

    std::function<void()> m_changed;
    std::optional<kernel::TemperatureSensor> m_sensor;
    std::vector<kernel::FanSensor> m_fans;
    std::string m_sensorNote;
    std::unique_ptr<desktop::PowerWatch> m_power;
    libsystemd::Connection m_sessionBus;
    std::unique_ptr<desktop::GameWatch> m_games;
    std::string m_gameNote;
    desktop::ProgramWatch m_programs;
    std::unique_ptr<presence::PresenceWatch> m_presence;
    std::string m_inputTimeName;
    presence::LastInput m_lastInput;
    /// BOINC's /idle_detect_shmem while publish-input-time is on.
    std::unique_ptr<presence::IdleDetectShmem> m_inputTime;
    control::Surroundings m_last;
    Samples m_temperatureSamples;
    Samples m_fanSamples;
    std::string m_temperatureError;  ///< the last reading's error, when it failed
    libsystemd::Timer m_sampleTimer; ///< the readings between two periods
    int m_samplesLeft = 0;
    std::chrono::microseconds m_sampleEvery{0};
};

} // namespace nicer::daemon
