#include "dbus/client/DaemonClient.h"

#include "api/BusNames.h"
#include "control/ParameterTable.h"
#include "dbus/client/Codec.h"

#include <cstring>
#include <string_view>

namespace nicer::dbus {

namespace {

/// The failure of a call to nicerd in plain words, with what to do when it is not running.
Error callError(const char* method, int r, const libsystemd::BusError& error) {
    if (error.hasName("org.freedesktop.DBus.Error.ServiceUnknown") ||
        error.hasName("org.freedesktop.DBus.Error.NameHasNoOwner")) {
        return Error{"nicerd is not running: start it with `systemctl --user start nicerd` or run `nicerd`"};
    }
    return libsystemd::busError(std::string("nicerd ") + method, r, error);
}

} // namespace

Result<DaemonClient> DaemonClient::connect() {
    sd_bus* bus = nullptr;
    if (int r = sd_bus_open_user(&bus); r < 0) {
        return libsystemd::busError("cannot connect to the session bus (is a systemd user session running?)",
                                    r);
    }
    return DaemonClient(libsystemd::BusPtr(bus));
}

Result<void> DaemonClient::callNoArgs(const char* method) {
    libsystemd::BusError error;
    // No auto-start: `nicer pause` must not start a daemon just to pause it.
    sd_bus_message* m = nullptr;
    int r = sd_bus_message_new_method_call(m_bus.get(), &m, api::kBusName, api::kObjectPath, api::kInterface,
                                           method);
    libsystemd::BusMessagePtr call(m);
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
    libsystemd::BusError error;
    sd_bus_message* reply = nullptr;
    int r =
        sd_bus_call_method(m_bus.get(), api::kBusName, api::kObjectPath, "org.freedesktop.DBus.Properties",
                           "GetAll", error.get(), &reply, "s", api::kInterface);
    libsystemd::BusMessagePtr owned(reply);
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
        if (const auto* info = control::findBusParameter(key)) {
            std::string problem;
            r = codec::readParameterVariant(reply, *info, s.params, problem);
        } else if (key == "ApiVersion") {
            r = readU32(s.apiVersion);
        } else if (key == "MemoryMaxPercent") {
            double percent = 0;
            r = sd_bus_message_read(reply, "v", "d", &percent);
            s.memoryMaxPercent = percent;
        } else if (key == "MemoryMax") {
            r = sd_bus_message_read(reply, "v", "t", &s.memoryMaxBytes);
        } else if (key == "BandwidthCap") {
            std::uint64_t cap = 0;
            r = sd_bus_message_read(reply, "v", "t", &cap);
            s.bandwidth.capBytesPerSecond = cap > 0 ? std::optional<std::uint64_t>(cap) : std::nullopt;
        } else if (key == "Paused") {
            r = readBool(s.paused);
        } else if (key == "DemoWorkload") {
            r = readBool(s.demo);
        } else if (key == "Instances") {
            r = readU32(s.instances);
        } else if (key == "CpuCount") {
            r = readU32(s.cpuCount);
        } else if (key == "OverloadCount") {
            r = readU32(s.overloadCount);
        } else if (key == "Quota") {
            r = readDouble(s.quota);
        } else if (key == "Multiplier") {
            r = readDouble(s.multiplier);
        } else if (key == "Idle") {
            r = readDouble(s.idle);
        } else if (key == "Foreground") {
            r = readDouble(s.foreground);
        } else if (key == "Background") {
            r = readDouble(s.background);
        } else if (key == "Outside") {
            r = readDouble(s.outside);
        } else if (key == "DownloadRate") {
            r = readDouble(s.downloadRate);
        } else if (key == "BandwidthMode") {
            const char* text = nullptr;
            r = sd_bus_message_read(reply, "v", "s", &text);
            s.bandwidth.kind =
                api::bandwidthKindFromKeyword(text ? text : "").value_or(api::BandwidthMode::Kind::None);
        } else if (key == "BoincState" || key == "BoincDetail" || key == "BoincSystemService") {
            const char* text = nullptr;
            r = sd_bus_message_read(reply, "v", "s", &text);
            (key == "BoincState"    ? s.boinc.state
             : key == "BoincDetail" ? s.boinc.detail
                                    : s.boinc.systemService) = text ? text : "";
        } else if (key == "BoincOverrideApplied") {
            int applied = 0;
            r = sd_bus_message_read(reply, "v", "b", &applied);
            s.boinc.overrideApplied = applied != 0;
        } else if (key == "BoincMaxDownRate") {
            r = readDouble(s.boinc.maxDownRate);
        } else if (key == "BoincMaxUpRate") {
            r = readDouble(s.boinc.maxUpRate);
        } else if (key == "BoincProjects") {
            r = codec::readArrayVariant(reply, s.boinc.projects);
        } else if (key == "BoincTasks") {
            r = codec::readArrayVariant(reply, s.boinc.tasks);
        } else if (key == "BoincTransfers") {
            r = codec::readArrayVariant(reply, s.boinc.transfers);
        } else if (key == "BoincNotices") {
            r = codec::readArrayVariant(reply, s.boinc.notices);
        } else if (key == "Actuator" || key == "ActuatorNote" || key == "LastError" ||
                   key == "WorkloadPreset" || key == "Signal" || key == "SignalSetting" ||
                   key == "Placement" || key == "PlacementNote") {
            const char* text = nullptr;
            r = sd_bus_message_read(reply, "v", "s", &text);
            (key == "Actuator"        ? s.actuator
             : key == "ActuatorNote"  ? s.actuatorNote
             : key == "Placement"     ? s.placement
             : key == "PlacementNote" ? s.placementNote
             : key == "LastError"     ? s.lastError
             : key == "Signal"        ? s.signal
             : key == "SignalSetting" ? s.signalSetting
                                      : s.preset) = text ? text : "";
        } else if (key == "Downloads") {
            // An older nicerd's (ApiVersion 1: a(sttds)) cannot be read as fields: shown as none.
            const char* contents = nullptr;
            r = sd_bus_message_peek_type(reply, nullptr, &contents);
            if (r >= 0 && contents && codec::arraySignature<api::DownloadEntry>() == contents) {
                r = codec::readArrayVariant(reply, s.downloads);
            } else if (r >= 0) {
                r = sd_bus_message_skip(reply, "v");
            }
        } else if (key == "WorkloadPresets") {
            r = codec::readArrayVariant(reply, s.presets);
        } else if (key == "Workload") {
            char** strv = nullptr;
            r = sd_bus_message_enter_container(reply, 'v', "as");
            if (r >= 0) {
                r = sd_bus_message_read_strv(reply, &strv);
            }
            for (char** p = strv; p && *p; ++p) {
                s.workload.emplace_back(*p);
                std::free(*p);
            }
            std::free(strv);
            if (r >= 0) {
                r = sd_bus_message_exit_container(reply);
            }
        } else {
            r = sd_bus_message_skip(reply, "v"); // a newer daemon's property: ignore
        }
        if (r >= 0) {
            r = sd_bus_message_exit_container(reply);
        }
    }
    if (r < 0) {
        return libsystemd::busError("cannot read nicerd's status", r);
    }
    return s;
}

Result<void> DaemonClient::setParameters(const control::ControllerParams& p) {
    sd_bus_message* m = nullptr;
    int r = sd_bus_message_new_method_call(m_bus.get(), &m, api::kBusName, api::kObjectPath, api::kInterface,
                                           "SetParameters");
    libsystemd::BusMessagePtr call(m);
    if (r >= 0) {
        r = codec::appendParameters(m, p);
    }
    libsystemd::BusError error;
    if (r >= 0) {
        r = sd_bus_call(m_bus.get(), m, 0, error.get(), nullptr);
    }
    if (r < 0) {
        return callError("SetParameters", r, error);
    }
    return {};
}

Result<void> DaemonClient::callWithStrings(const char* method, std::initializer_list<std::string> args,
                                           std::uint64_t timeoutUsec) {
    sd_bus_message* m = nullptr;
    int r = sd_bus_message_new_method_call(m_bus.get(), &m, api::kBusName, api::kObjectPath, api::kInterface,
                                           method);
    libsystemd::BusMessagePtr call(m);
    for (const auto& arg : args) {
        if (r >= 0) {
            r = sd_bus_message_append(m, "s", arg.c_str());
        }
    }
    libsystemd::BusError error;
    if (r >= 0) {
        r = sd_bus_call(m_bus.get(), m, timeoutUsec, error.get(), nullptr);
    }
    if (r < 0) {
        return callError(method, r, error);
    }
    return {};
}

Result<void> DaemonClient::setWorkloadPreset(const std::string& id) {
    return callWithStrings("SetWorkloadPreset", {id});
}

namespace {
/// BOINC answers an attach after fetching the project's master page, which may take a while.
constexpr std::uint64_t kBoincAttachTimeoutUsec = 120'000'000;
} // namespace

Result<void> DaemonClient::boincAttach(const std::string& url, const std::string& accountKey) {
    return callWithStrings("BoincAttach", {url, accountKey}, kBoincAttachTimeoutUsec);
}

Result<void> DaemonClient::boincAttachAccountManager(const std::string& url, const std::string& name,
                                                     const std::string& password) {
    return callWithStrings("BoincAttachAccountManager", {url, name, password}, kBoincAttachTimeoutUsec);
}

Result<void> DaemonClient::boincDetach(const std::string& url) {
    return callWithStrings("BoincDetach", {url}, kBoincAttachTimeoutUsec);
}

Result<std::vector<api::Sample>> DaemonClient::history() {
    libsystemd::BusError error;
    sd_bus_message* reply = nullptr;
    int r = sd_bus_call_method(m_bus.get(), api::kBusName, api::kObjectPath, api::kInterface, "GetHistory",
                               error.get(), &reply, "");
    libsystemd::BusMessagePtr owned(reply);
    if (r < 0) {
        return callError("GetHistory", r, error);
    }
    std::vector<api::Sample> samples;
    r = codec::readArray(reply, samples);
    if (r < 0) {
        return libsystemd::busError("cannot read nicerd's history", r);
    }
    return samples;
}

} // namespace nicer::dbus
