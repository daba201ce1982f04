#include "daemon/RuleSources.h"

#include "desktop/ProgramList.h"
#include "util/Log.h"
#include "util/WallClock.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <unistd.h>

namespace nicer::daemon {

namespace {

std::chrono::milliseconds awayDelay(double seconds) {
    return std::chrono::milliseconds(std::llround(seconds * 1000.0));
}

} // namespace

Result<std::unique_ptr<RuleSources>> RuleSources::create(sd_event* event, const DaemonConfig& config,
                                                         std::function<void()> changed) {
    auto sources = std::unique_ptr<RuleSources>(new RuleSources(event, config, std::move(changed)));
    if (auto found = sources->findSensors(config); !found) {
        return found.error();
    }
    auto programs = desktop::checkProgramList(config.exclusivePrograms);
    if (!programs) {
        return Error{"--exclusive-program: " + programs.error().message};
    }
    sources->m_programs.setNames(std::move(*programs));
    auto* self = sources.get();
    auto timer = libsystemd::Timer::create(event, [self] {
        self->sampleSensors();
        if (--self->m_samplesLeft > 0) {
            self->m_sampleTimer.armIn(self->m_sampleEvery);
        }
    });
    if (!timer) {
        return Error{"cannot read the sensors within a period: " + timer.error().message};
    }
    sources->m_sampleTimer = std::move(*timer);
    auto power =
        desktop::PowerWatch::create(event, {.systemBusAddress = {}, .powerSupplyDir = config.powerSupplyDir},
                                    [self] { self->m_changed(); });
    if (!power) {
        return Error{"cannot watch the power supply: " + power.error().message};
    }
    sources->m_power = std::move(*power);
    const auto variable = [](const char* name) {
        const char* value = std::getenv(name);
        return std::string(value != nullptr ? value : "");
    };
    auto presence = presence::PresenceWatch::create(
        event,
        {.systemBusAddress = {},
         .uid = getuid(),
         .displays = {variable("DISPLAY"), variable("WAYLAND_DISPLAY"), variable("XAUTHORITY")}},
        awayDelay(config.params.awayDelay), [self] { self->m_changed(); });
    if (!presence) {
        return Error{"cannot watch whether you are at the machine: " + presence.error().message};
    }
    sources->m_presence = std::move(*presence);
    sources->watchSession();
    return sources;
}

Result<void> RuleSources::findSensors(const DaemonConfig& config) {
    if (!config.temperatureSensor.empty()) {
        auto given = kernel::temperatureSensorAt(config.temperatureSensor);
        if (!given) {
            return given.error();
        }
        m_sensor = *given;
    } else if (auto found = kernel::findCpuTemperature(config.hwmonDir, config.thermalDir)) {
        m_sensor = *found;
    } else {
        m_sensorNote = found.error().message + ": the work runs without the temperature rule";
        log::notice() << "nicerd: " << m_sensorNote;
    }
    m_fans = kernel::findFans(config.hwmonDir);
    return {};
}

void RuleSources::watchSession() {
    m_games.reset();
    m_presence->setSessionBus(nullptr);
    if (auto connected = m_sessionBus.connect(); !connected) {
        m_gameNote = "cannot watch GameMode: no session bus: " + connected.error().message;
    }
}

Result<void> RuleSources::watchSession(sd_bus* bus) {
    m_presence->setSessionBus(bus);
    auto games = desktop::GameWatch::create(bus, [this] { m_changed(); });
    if (!games) {
        // The connection stays: GameMode is watched again once it closes.
        m_gameNote = "cannot watch GameMode: " + games.error().message;
        return {};
    }
    m_games = std::move(*games);
    m_gameNote.clear();
    return {};
}

control::Surroundings RuleSources::read(const control::ControllerParams& params) {
    control::Surroundings now;
    // The wall clock in the local zone, read every period: a clock set by NTP, a suspend or a new time zone
    // (TZ, /etc/localtime) moves the schedule's edges with it.
    now.localTime = wallclock::localMinute(std::chrono::system_clock::now());
    m_presence->setDelay(awayDelay(params.awayDelay));
    m_presence->setTellLogind(params.logindIdleHint != 0);
    m_presence->poll();
    now.presence = m_presence->verdict().presence;
    sampleSensors();
    if (m_sensor) {
        if (auto mean = m_temperatureSamples.take()) {
            now.temperature = *mean;
            m_sensorNote.clear();
        } else {
            // A sensor that goes away (a driver unloaded) leaves the rule out, and says so.
            m_sensorNote = m_temperatureError + ": the temperature rule waits until it can be read";
        }
        now.temperatureTarget = control::resolveTemperatureTarget(
            control::profileFor(params, now.presence).temperatureTarget, m_sensor->max, m_sensor->crit,
            now.presence != control::Presence::Away);
    }
    now.fanSpeed = m_fanSamples.take();
    if ((m_sensor || !m_fans.empty()) && m_sampleTimer) {
        m_sampleEvery = std::chrono::duration_cast<std::chrono::microseconds>(params.period) / kSensorSamples;
        m_samplesLeft = kSensorSamples - 1;
        m_sampleTimer.armIn(m_sampleEvery);
    }
    m_power->poll();
    const auto& power = m_power->state();
    now.onBattery = power.onBattery;
    now.batteryPercent = power.percent;
    now.powerSaver = power.powerSaver;
    if (!m_sessionBus.isOpen()) {
        watchSession(); // the session bus restarted, or was not there yet
    }
    now.games = m_games ? m_games->clientCount() : 0;
    now.programs = m_programs.running();
    m_last = now;
    return now;
}

std::optional<double> RuleSources::Samples::take() {
    if (count == 0) {
        return std::nullopt;
    }
    const double mean = sum / count;
    *this = {};
    return mean;
}

void RuleSources::sampleSensors() {
    if (m_sensor) {
        if (auto reading = kernel::readTemperature(m_sensor->input)) {
            m_temperatureSamples.add(*reading);
        } else {
            m_temperatureError = reading.error().message;
        }
    }
    std::optional<double> fastest;
    for (const auto& fan : m_fans) {
        if (auto rpm = kernel::readFan(fan.input)) {
            fastest = std::max(fastest.value_or(0.0), *rpm);
        }
    }
    if (fastest) {
        m_fanSamples.add(*fastest);
    }
}

void RuleSources::publishInputTime(const control::ControllerParams& params) {
    const auto now = std::chrono::system_clock::now();
    const auto last = m_lastInput.update(m_presence->verdict(), now, awayDelay(params.awayDelay));
    if (params.publishInputTime == 0) {
        m_inputTime.reset(); // the object stays: BOINC ignores it once its update time is a minute old
        return;
    }
    if (!m_inputTime) {
        m_inputTime = std::make_unique<presence::IdleDetectShmem>(m_inputTimeName);
    }
    if (last) {
        m_inputTime->publish(now, *last);
    }
}

void RuleSources::describe(api::DaemonState& s) const {
    s.temperature = m_last.temperature.value_or(api::kNoTemperature);
    s.temperatureTargetInUse = m_sensor ? m_last.temperatureTarget : 0.0;
    s.temperatureSensor = m_sensor ? m_sensor->name + " (" + m_sensor->input.string() + ")" : std::string();
    s.sensorNote = m_sensorNote;
    s.fanSpeed = m_last.fanSpeed.value_or(-1.0);
    const auto& power = m_power->state();
    s.onBattery = power.onBattery;
    s.batteryPercent = power.percent;
    s.powerSaver = power.powerSaver;
    s.powerSource = power.source;
    s.powerNote = m_power->note();
    s.games = static_cast<std::uint32_t>(m_last.games);
    s.gameNote = m_games ? m_games->note() : m_gameNote;
    s.exclusivePrograms = m_programs.names();
    s.programsRunning = m_last.programs;
    // As it is now, not as the last period read it: a change is announced when it happens, and the rules
    // take it from the next period on.
    const auto verdict = m_presence->verdict();
    s.presence = verdict.presence;
    s.presenceSource = verdict.source;
    s.presenceReason = verdict.reason;
    s.inputTimeNote = m_inputTime ? m_inputTime->note() : std::string();
}

} // namespace nicer::daemon
