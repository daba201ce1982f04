#include "dbus/client/DaemonClient.h"

#include "api/BusNames.h"
#include "api/DaemonProperties.h"
#include "dbus/wire/Codec.h"

#include <cstring>

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

Result<api::DaemonState> DaemonClient::status() {
    libsystemd::BusError error;
    sd_bus_message* reply = nullptr;
    int r =
        sd_bus_call_method(m_bus.get(), api::kBusName, api::kObjectPath, "org.freedesktop.DBus.Properties",
                           "GetAll", error.get(), &reply, "s", api::kInterface);
    libsystemd::BusMessagePtr owned(reply);
    if (r < 0) {
        return callError("GetAll", r, error);
    }
    api::DaemonState state;
    r = sd_bus_message_enter_container(reply, 'a', "{sv}");
    while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
        const char* name = nullptr;
        if ((r = sd_bus_message_read(reply, "s", &name)) < 0) {
            break;
        }
        if (const auto* property = api::findProperty(name)) {
            r = codec::readPropertyVariant(reply, *property, state);
        } else {
            r = sd_bus_message_skip(reply, "v"); // a newer nicerd's property
        }
        if (r >= 0) {
            r = sd_bus_message_exit_container(reply);
        }
    }
    if (r < 0) {
        return libsystemd::busError("cannot read nicerd's status", r);
    }
    return state;
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
