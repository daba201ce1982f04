#include "dbus/DaemonClient.h"

#include "api/BusNames.h"

#include <cstring>
#include <string_view>

namespace nicer::dbus {

namespace {

/// The failure of a call to nicerd in plain words, with what to do when it is not running.
Error callError(const char* method, int r, const sd::BusError& error) {
    if (error.hasName("org.freedesktop.DBus.Error.ServiceUnknown") ||
        error.hasName("org.freedesktop.DBus.Error.NameHasNoOwner")) {
        return Error{"nicerd is not running: start it with `systemctl --user start nicerd` or run `nicerd`"};
    }
    return sd::busError(std::string("nicerd ") + method, r, error);
}

} // namespace

Result<DaemonClient> DaemonClient::connect() {
    sd_bus* bus = nullptr;
    if (int r = sd_bus_open_user(&bus); r < 0) {
        return sd::busError("cannot connect to the session bus (is a systemd user session running?)", r);
    }
    return DaemonClient(sd::BusPtr(bus));
}

Result<void> DaemonClient::callNoArgs(const char* method) {
    sd::BusError error;
    // No auto-start: `nicer pause` must not start a daemon just to pause it.
    sd_bus_message* m = nullptr;
    int r = sd_bus_message_new_method_call(m_bus.get(), &m, api::kBusName, api::kObjectPath, api::kInterface,
                                           method);
    sd::BusMessagePtr call(m);
    if (r >= 0) {
        r = sd_bus_message_set_auto_start(m, 0);
    }
    if (r >= 0) {
        r = sd_bus_call(m_bus.get(), m, 0, error.get(), nullptr);
    }
    if (r < 0) {
        return callError(method, r, error);
    }
    return {};
}

Result<void> DaemonClient::pause() {
    return callNoArgs("Pause");
}
Result<void> DaemonClient::resume() {
    return callNoArgs("Resume");
}

Result<DaemonStatus> DaemonClient::status() {
    sd::BusError error;
    sd_bus_message* reply = nullptr;
    int r =
        sd_bus_call_method(m_bus.get(), api::kBusName, api::kObjectPath, "org.freedesktop.DBus.Properties",
                           "GetAll", error.get(), &reply, "s", api::kInterface);
    sd::BusMessagePtr owned(reply);
    if (r < 0) {
        return callError("GetAll", r, error);
    }
    DaemonStatus s;
    r = sd_bus_message_enter_container(reply, 'a', "{sv}");
    while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
        const char* name = nullptr;
        if ((r = sd_bus_message_read(reply, "s", &name)) < 0) {
            break;
        }
        const std::string_view key = name;
        const auto readDouble = [&](double& out) { return sd_bus_message_read(reply, "v", "d", &out); };
        const auto readU32 = [&](std::uint32_t& out) { return sd_bus_message_read(reply, "v", "u", &out); };
        const auto readBool = [&](bool& out) {
            int b = 0;
            const int rr = sd_bus_message_read(reply, "v", "b", &b);
            out = b != 0;
            return rr;
        };
        std::uint32_t u = 0;
        if (key == "ReserveBand")
            r = readDouble(s.params.reserveBand);
        else if (key == "MinMultiplier")
            r = readDouble(s.params.minMultiplier);
        else if (key == "MaxMultiplier")
            r = readDouble(s.params.maxMultiplier);
        else if (key == "IdleEpsilon")
            r = readDouble(s.params.idleEpsilon);
        else if (key == "OverloadThreshold") {
            r = readU32(u);
            s.params.overloadThreshold = static_cast<int>(u);
        } else if (key == "PeriodUSec") {
            std::uint64_t t = 0;
            r = sd_bus_message_read(reply, "v", "t", &t);
            s.params.period = std::chrono::milliseconds(t / 1000);
        } else if (key == "Paused")
            r = readBool(s.paused);
        else if (key == "DemoWorkload")
            r = readBool(s.demo);
        else if (key == "Instances")
            r = readU32(s.instances);
        else if (key == "CpuCount")
            r = readU32(s.cpuCount);
        else if (key == "OverloadCount")
            r = readU32(s.overloadCount);
        else if (key == "Quota")
            r = readDouble(s.quota);
        else if (key == "Multiplier")
            r = readDouble(s.multiplier);
        else if (key == "Idle")
            r = readDouble(s.idle);
        else if (key == "Foreground")
            r = readDouble(s.foreground);
        else if (key == "Background")
            r = readDouble(s.background);
        else if (key == "DownloadRate")
            r = readDouble(s.downloadRate);
        else if (key == "Actuator" || key == "LastError" || key == "WorkloadPreset" ||
                 key == "BandwidthMode") {
            const char* text = nullptr;
            r = sd_bus_message_read(reply, "v", "s", &text);
            (key == "Actuator"        ? s.actuator
             : key == "LastError"     ? s.lastError
             : key == "BandwidthMode" ? s.bandwidthMode
                                      : s.preset) = text ? text : "";
        } else if (key == "Downloads") {
            r = sd_bus_message_enter_container(reply, 'v', "a(sttds)");
            if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(sttds)");
            while (r >= 0) {
                const char *file = nullptr, *state = nullptr;
                api::DownloadEntry e;
                r = sd_bus_message_read(reply, "(sttds)", &file, &e.bytesDone, &e.bytesTotal, &e.rate,
                                        &state);
                if (r <= 0) {
                    break;
                }
                e.name = file;
                e.state = state;
                s.downloads.push_back(std::move(e));
            }
            if (r >= 0)
                r = sd_bus_message_exit_container(reply);
            if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        } else if (key == "WorkloadPresets") {
            r = sd_bus_message_enter_container(reply, 'v', "a(sssb)");
            if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(sssb)");
            while (r >= 0) {
                const char *id = nullptr, *title = nullptr, *description = nullptr;
                int available = 0;
                r = sd_bus_message_read(reply, "(sssb)", &id, &title, &description, &available);
                if (r <= 0) {
                    break;
                }
                s.presets.push_back({id, title, description, available != 0});
            }
            if (r >= 0)
                r = sd_bus_message_exit_container(reply);
            if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        } else if (key == "Workload") {
            char** strv = nullptr;
            r = sd_bus_message_enter_container(reply, 'v', "as");
            if (r >= 0)
                r = sd_bus_message_read_strv(reply, &strv);
            for (char** p = strv; p && *p; ++p) {
                s.workload.emplace_back(*p);
                std::free(*p);
            }
            std::free(strv);
            if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        } else {
            r = sd_bus_message_skip(reply, "v"); // a newer daemon's property: ignore
        }
        if (r >= 0) {
            r = sd_bus_message_exit_container(reply);
        }
    }
    if (r < 0) {
        return sd::busError("cannot read nicerd's status", r);
    }
    return s;
}

Result<void> DaemonClient::setParameters(const control::ControllerParams& p) {
    sd_bus_message* m = nullptr;
    int r = sd_bus_message_new_method_call(m_bus.get(), &m, api::kBusName, api::kObjectPath, api::kInterface,
                                           "SetParameters");
    sd::BusMessagePtr call(m);
    if (r >= 0) {
        r = sd_bus_message_append(m, "a{sv}", 6, "ReserveBand", "d", p.reserveBand, "MinMultiplier", "d",
                                  p.minMultiplier, "MaxMultiplier", "d", p.maxMultiplier, "OverloadThreshold",
                                  "u", static_cast<std::uint32_t>(p.overloadThreshold), "IdleEpsilon", "d",
                                  p.idleEpsilon, "PeriodUSec", "t",
                                  static_cast<std::uint64_t>(p.period.count()) * 1000);
    }
    sd::BusError error;
    if (r >= 0) {
        r = sd_bus_call(m_bus.get(), m, 0, error.get(), nullptr);
    }
    if (r < 0) {
        return callError("SetParameters", r, error);
    }
    return {};
}

Result<void> DaemonClient::setWorkloadPreset(const std::string& id) {
    sd_bus_message* m = nullptr;
    int r = sd_bus_message_new_method_call(m_bus.get(), &m, api::kBusName, api::kObjectPath, api::kInterface,
                                           "SetWorkloadPreset");
    sd::BusMessagePtr call(m);
    if (r >= 0) {
        r = sd_bus_message_append(m, "s", id.c_str());
    }
    sd::BusError error;
    if (r >= 0) {
        r = sd_bus_call(m_bus.get(), m, 0, error.get(), nullptr);
    }
    if (r < 0) {
        return callError("SetWorkloadPreset", r, error);
    }
    return {};
}

Result<std::vector<api::Sample>> DaemonClient::history() {
    sd::BusError error;
    sd_bus_message* reply = nullptr;
    int r = sd_bus_call_method(m_bus.get(), api::kBusName, api::kObjectPath, api::kInterface, "GetHistory",
                               error.get(), &reply, "");
    sd::BusMessagePtr owned(reply);
    if (r < 0) {
        return callError("GetHistory", r, error);
    }
    std::vector<api::Sample> samples;
    r = sd_bus_message_enter_container(reply, 'a', "(tdddddub)");
    while (r >= 0) {
        api::Sample s;
        int paused = 0;
        r = sd_bus_message_read(reply, "(tdddddub)", &s.timeUSec, &s.idle, &s.foreground, &s.background,
                                &s.quota, &s.multiplier, &s.overloadCount, &paused);
        if (r <= 0) {
            break;
        }
        s.paused = paused != 0;
        samples.push_back(s);
    }
    if (r < 0) {
        return sd::busError("cannot read nicerd's history", r);
    }
    return samples;
}

} // namespace nicer::dbus
