#include "dbus/DaemonService.h"

#include "api/BusNames.h"
#include "control/ControllerParams.h"
#include "workload/WorkloadChooser.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

namespace nicer::dbus {

namespace {

constexpr const char* kInvalidArgs = "org.freedesktop.DBus.Error.InvalidArgs";
constexpr const char* kFailed = "org.freedesktop.DBus.Error.Failed";

/// Runs @p body, turning a failed Result or an exception into a D-Bus error reply.
template <typename Body>
int guarded(sd_bus_error* error, Body&& body) noexcept {
    try {
        return body();
    } catch (const std::exception& e) {
        return sd_bus_error_set(error, kFailed, e.what());
    } catch (...) {
        return sd_bus_error_set(error, kFailed, "unexpected error in nicerd");
    }
}

int appendSample(sd_bus_message* m, const api::Sample& s) {
    return sd_bus_message_append(m, api::kSampleSignature, s.timeUSec, s.idle, s.foreground, s.background,
                                 s.quota, s.multiplier, s.overloadCount, static_cast<int>(s.paused));
}

/// Reads one a{sv} entry's value into @p params by its D-Bus name.
int readParameter(sd_bus_message* m, std::string_view key, control::ControllerParams& p,
                  sd_bus_error* error) {
    int r = 0;
    if (key == "ReserveBand" || key == "MinMultiplier" || key == "MaxMultiplier" || key == "IdleEpsilon") {
        double v = 0;
        r = sd_bus_message_read(m, "v", "d", &v);
        if (r >= 0) {
            (key == "ReserveBand"     ? p.reserveBand
             : key == "MinMultiplier" ? p.minMultiplier
             : key == "MaxMultiplier" ? p.maxMultiplier
                                      : p.idleEpsilon) = v;
        }
    } else if (key == "OverloadThreshold") {
        std::uint32_t v = 0;
        r = sd_bus_message_read(m, "v", "u", &v);
        if (r >= 0 && v > static_cast<std::uint32_t>(INT32_MAX)) {
            return sd_bus_error_setf(error, kInvalidArgs, "OverloadThreshold = %u is out of range", v);
        }
        p.overloadThreshold = static_cast<int>(v);
    } else if (key == "PeriodUSec") {
        std::uint64_t v = 0;
        r = sd_bus_message_read(m, "v", "t", &v);
        p.period = std::chrono::milliseconds(v / 1000);
        if (r >= 0 && v % 1000 != 0) {
            return sd_bus_error_setf(error, kInvalidArgs, "PeriodUSec must be whole milliseconds");
        }
    } else {
        return sd_bus_error_setf(error, kInvalidArgs,
                                 "unknown parameter '%.*s': the parameters are ReserveBand, MinMultiplier, "
                                 "MaxMultiplier, OverloadThreshold, IdleEpsilon and PeriodUSec",
                                 static_cast<int>(key.size()), key.data());
    }
    if (r < 0) {
        return sd_bus_error_setf(error, kInvalidArgs, "parameter %.*s has the wrong type: %s",
                                 static_cast<int>(key.size()), key.data(), std::strerror(-r));
    }
    return 0;
}

} // namespace

const sd_bus_vtable DaemonService::s_vtable[] = {
    SD_BUS_VTABLE_START(0),
    // Parameters.
    SD_BUS_PROPERTY("ReserveBand", "d", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("MinMultiplier", "d", &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("MaxMultiplier", "d", &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("OverloadThreshold", "u", &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("IdleEpsilon", "d", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("PeriodUSec", "t", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    // State; these change every period and are announced by the Sample signal instead.
    SD_BUS_PROPERTY("Paused", "b", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Actuator", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Workload", "as", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("DemoWorkload", "b", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Instances", "u", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("WorkloadPreset", "s", &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    // Whether a preset's program is installed can change at any time, unannounced: read it when needed.
    SD_BUS_PROPERTY("WorkloadPresets", "a(sssb)", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("CpuCount", "u", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Quota", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Multiplier", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("OverloadCount", "u", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Idle", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Foreground", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Background", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("LastError", "s", &DaemonService::getProperty, 0, 0),
    // Downloads change many times a second: clients poll them while they show them.
    SD_BUS_PROPERTY("Downloads", "a(sttds)", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("DownloadRate", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("BandwidthMode", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_METHOD("Pause", "", "", &DaemonService::onPause, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Resume", "", "", &DaemonService::onResume, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetParameters", "a{sv}", "", &DaemonService::onSetParameters, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetWorkloadPreset", "s", "", &DaemonService::onSetWorkloadPreset,
                  SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetHistory", "", "a(tdddddub)", &DaemonService::onGetHistory, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("Sample", "tdddddub", 0),
    SD_BUS_VTABLE_END,
};

Result<std::unique_ptr<DaemonService>> DaemonService::publish(sd_bus* bus, daemon::DaemonControl& daemon) {
    auto service = std::unique_ptr<DaemonService>(new DaemonService(bus, daemon));
    sd_bus_slot* slot = nullptr;
    int r = sd_bus_add_object_vtable(bus, &slot, api::kObjectPath, api::kInterface, s_vtable, service.get());
    if (r < 0) {
        return sd::busError("cannot publish nicerd's D-Bus object", r);
    }
    service->m_slot.reset(slot);
    r = sd_bus_request_name(bus, api::kBusName, 0);
    if (r == -EEXIST || r == -EALREADY) {
        return Error{std::string("another nicerd is already running for this user (it owns ") +
                     api::kBusName +
                     " on the session bus); use `nicer status` to talk to it, or stop it first"};
    }
    if (r < 0) {
        return sd::busError(std::string("cannot take the D-Bus name ") + api::kBusName, r);
    }
    return service;
}

int DaemonService::getProperty(sd_bus*, const char*, const char*, const char* property, sd_bus_message* reply,
                               void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        const auto& d = static_cast<DaemonService*>(userdata)->m_daemon;
        const auto& p = d.params();
        const auto& st = d.controllerState();
        const auto& last = d.lastSample();
        const std::string_view name = property;
        if (name == "ReserveBand")
            return sd_bus_message_append(reply, "d", p.reserveBand);
        if (name == "MinMultiplier")
            return sd_bus_message_append(reply, "d", p.minMultiplier);
        if (name == "MaxMultiplier")
            return sd_bus_message_append(reply, "d", p.maxMultiplier);
        if (name == "OverloadThreshold")
            return sd_bus_message_append(reply, "u", static_cast<std::uint32_t>(p.overloadThreshold));
        if (name == "IdleEpsilon")
            return sd_bus_message_append(reply, "d", p.idleEpsilon);
        if (name == "PeriodUSec")
            return sd_bus_message_append(reply, "t", static_cast<std::uint64_t>(p.period.count()) * 1000);
        if (name == "Paused")
            return sd_bus_message_append(reply, "b", static_cast<int>(d.paused()));
        if (name == "Actuator")
            return sd_bus_message_append(reply, "s", d.actuatorName().c_str());
        if (name == "DemoWorkload")
            return sd_bus_message_append(reply, "b", static_cast<int>(d.workload().demo));
        if (name == "Instances")
            return sd_bus_message_append(reply, "u", static_cast<std::uint32_t>(d.workload().instances));
        if (name == "WorkloadPreset")
            return sd_bus_message_append(reply, "s", d.workload().preset.c_str());
        if (name == "CpuCount")
            return sd_bus_message_append(reply, "u", static_cast<std::uint32_t>(d.cpuCount()));
        if (name == "Quota")
            return sd_bus_message_append(reply, "d", last ? last->quota : 0.0);
        if (name == "Multiplier")
            return sd_bus_message_append(reply, "d", st.multiplier);
        if (name == "OverloadCount")
            return sd_bus_message_append(reply, "u", static_cast<std::uint32_t>(st.overloadCount));
        if (name == "Idle")
            return sd_bus_message_append(reply, "d", last ? last->idle : 0.0);
        if (name == "Foreground")
            return sd_bus_message_append(reply, "d", last ? last->foreground : 0.0);
        if (name == "Background")
            return sd_bus_message_append(reply, "d", last ? last->background : 0.0);
        if (name == "LastError")
            return sd_bus_message_append(reply, "s", d.lastError().c_str());
        if (name == "DownloadRate")
            return sd_bus_message_append(reply, "d", d.downloadRate());
        if (name == "BandwidthMode")
            return sd_bus_message_append(reply, "s", d.bandwidthMode().c_str());
        if (name == "Downloads") {
            int r = sd_bus_message_open_container(reply, 'a', "(sttds)");
            for (const auto& e : d.downloads()) {
                if (r >= 0)
                    r = sd_bus_message_append(reply, "(sttds)", e.name.c_str(), e.bytesDone, e.bytesTotal,
                                              e.rate, e.state.c_str());
            }
            return r < 0 ? r : sd_bus_message_close_container(reply);
        }
        if (name == "Workload") {
            int r = sd_bus_message_open_container(reply, 'a', "s");
            for (const auto& arg : d.workload().argv) {
                if (r >= 0)
                    r = sd_bus_message_append(reply, "s", arg.c_str());
            }
            return r < 0 ? r : sd_bus_message_close_container(reply);
        }
        if (name == "WorkloadPresets") {
            int r = sd_bus_message_open_container(reply, 'a', "(sssb)");
            for (const auto& preset : d.presets()) {
                if (r >= 0)
                    r = sd_bus_message_append(reply, "(sssb)", preset.id.c_str(), preset.name.c_str(),
                                              preset.description.c_str(), static_cast<int>(preset.available));
            }
            return r < 0 ? r : sd_bus_message_close_container(reply);
        }
        return sd_bus_error_setf(error, "org.freedesktop.DBus.Error.UnknownProperty", "no property %s",
                                 property);
    });
}

int DaemonService::onPause(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        if (auto paused = self->m_daemon.pause(); !paused) {
            return sd_bus_error_set(error, kFailed, paused.error().message.c_str());
        }
        self->emitParametersChanged();
        return sd_bus_reply_method_return(m, "");
    });
}

int DaemonService::onResume(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        if (auto resumed = self->m_daemon.resume(); !resumed) {
            return sd_bus_error_set(error, kFailed, resumed.error().message.c_str());
        }
        self->emitParametersChanged();
        return sd_bus_reply_method_return(m, "");
    });
}

int DaemonService::onSetParameters(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        control::ControllerParams params = self->m_daemon.params();
        int r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
            const char* key = nullptr;
            if ((r = sd_bus_message_read(m, "s", &key)) < 0) {
                break;
            }
            if ((r = readParameter(m, key, params, error)) < 0) {
                return r;
            }
            r = sd_bus_message_exit_container(m);
        }
        if (r < 0) {
            return sd_bus_error_setf(error, kInvalidArgs, "SetParameters takes a{sv}: %s", std::strerror(-r));
        }
        // All or nothing: nothing changes unless every value is valid together.
        if (auto valid = control::validate(params); !valid) {
            return sd_bus_error_set(error, kInvalidArgs, valid.error().message.c_str());
        }
        if (auto set = self->m_daemon.setParams(params); !set) {
            return sd_bus_error_set(error, kFailed, set.error().message.c_str());
        }
        self->emitParametersChanged();
        return sd_bus_reply_method_return(m, "");
    });
}

int DaemonService::onSetWorkloadPreset(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        const char* id = nullptr;
        if (int r = sd_bus_message_read(m, "s", &id); r < 0) {
            return sd_bus_error_setf(error, kInvalidArgs, "SetWorkloadPreset takes s: %s", std::strerror(-r));
        }
        if (auto set = self->m_daemon.setWorkloadPreset(id); !set) {
            // The daemon's message says what is wrong; the error's name lets a client tell the cases apart.
            const char* name = kFailed;
            if (!workload::WorkloadChooser::known(id)) {
                name = kInvalidArgs;
            } else {
                for (const auto& preset : self->m_daemon.presets()) {
                    if (preset.id == id && !preset.available) {
                        name = api::kWorkloadUnavailableError;
                    }
                }
            }
            return sd_bus_error_set(error, name, set.error().message.c_str());
        }
        self->emitWorkloadChanged();
        return sd_bus_reply_method_return(m, "");
    });
}

int DaemonService::onGetHistory(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        sd_bus_message* reply = nullptr;
        int r = sd_bus_message_new_method_return(m, &reply);
        sd::BusMessagePtr owned(reply);
        if (r >= 0)
            r = sd_bus_message_open_container(reply, 'a', "(tdddddub)");
        for (const auto& s : self->m_daemon.history()) {
            if (r >= 0)
                r = sd_bus_message_open_container(reply, 'r', api::kSampleSignature);
            if (r >= 0)
                r = appendSample(reply, s);
            if (r >= 0)
                r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
            r = sd_bus_message_close_container(reply);
        if (r >= 0)
            r = sd_bus_send(nullptr, reply, nullptr);
        return r;
    });
}

void DaemonService::onSample(const api::Sample& s) {
    sd_bus_message* message = nullptr;
    if (sd_bus_message_new_signal(m_bus, &message, api::kObjectPath, api::kInterface, "Sample") < 0) {
        return;
    }
    sd::BusMessagePtr owned(message);
    if (appendSample(message, s) >= 0) {
        sd_bus_send(m_bus, message, nullptr);
    }
}

void DaemonService::emitParametersChanged() {
    sd_bus_emit_properties_changed(m_bus, api::kObjectPath, api::kInterface, "ReserveBand", "MinMultiplier",
                                   "MaxMultiplier", "OverloadThreshold", "IdleEpsilon", "PeriodUSec",
                                   "Paused", nullptr);
}

void DaemonService::emitWorkloadChanged() {
    sd_bus_emit_properties_changed(m_bus, api::kObjectPath, api::kInterface, "Workload", "DemoWorkload",
                                   "Instances", "WorkloadPreset", nullptr);
}

} // namespace nicer::dbus
