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
    /// the sensor's own limits.
    control::Surroundings read(const control::ControllerParams& params);
    /// Publishes the volunteer's last input for BOINC (publish-input-time), once a period after read().
    void publishInputTime(const control::ControllerParams& params);
    /// Their part of the daemon's state: the readings, the sources and their notes.
    void describe(api::DaemonState& state) const;
    /// The named programs from the next read() on (each checked: desktop::checkProgramList).
    void setPrograms(std::vector<std::string> names) { m_programs.setNames(std::move(names)); }

private:
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
};

} // namespace nicer::daemon
