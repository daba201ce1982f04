#include "dbus/client/DaemonClient.h"

#include "api/BusNames.h"
#include "api/DaemonProperties.h"
#include "dbus/wire/Codec.h"
#include "libsystemd/Message.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <utility>

namespace nicer::dbus {

namespace {

/// The failure of a call to nicerd in plain words, with what to do when it is not running.
Error callError(const char* method, int r, const libsystemd::BusError& error) {
    if (error.hasName("org.freedesktop.DBus.Error.ServiceUnknown") ||
        error.hasName("org.freedesktop.DBus.Error.NameHasNoOwner")) {
        return Error{"nicerd is not running: start it with `systemctl --user start nicerd` or run `nicerd`",
                     ErrorKind::Unavailable};
    }
    // The kind back from the error's name (DaemonService chose it by the kind nicerd's failure had).
    Error failure = libsystemd::busError(std::string("nicerd ") + method, r, error);
    if (error.hasName("org.freedesktop.DBus.Error.InvalidArgs")) {
        failure.kind = ErrorKind::InvalidInput;
    } else if (error.hasName(api::kWorkloadUnavailableError) || error.hasName(api::kBoincUnavailableError)) {
        failure.kind = ErrorKind::Unavailable;
    }
    return failure;
}

/// Calls nicerd's @p method with the arguments @p write appends, and no reply value; @p timeoutUsec 0 is
/// sd-bus's default.
template <typename Write>
Result<void> callMethod(sd_bus* bus, const char* method, std::uint64_t timeoutUsec, Write&& write) {
    libsystemd::BusError error;
    sd_bus_message* m = nullptr;
    const int r =
        sd_bus_message_new_method_call(bus, &m, api::kBusName, api::kObjectPath, api::kInterface, method);
    libsystemd::BusMessagePtr call(m);
    if (r < 0) {
        return callError(method, r, error);
    }
    libsystemd::MessageWriter out(m);
    std::forward<Write>(write)(out);
    if (!out.ok()) {
        return callError(method, out.result(), error);
    }
    if (const int called = sd_bus_call(bus, m, timeoutUsec, error.get(), nullptr); called < 0) {
        return callError(method, called, error);
    }
    return {};
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
    // No auto-start: `nicer pause` must not start a daemon just to pause it.
    return callMethod(m_bus.get(), method, 0, [](libsystemd::MessageWriter& out) {
        out.run([&] { return sd_bus_message_set_auto_start(out.message(), 0); });
    });
}

Result<void> DaemonClient::pause(std::optional<std::chrono::system_clock::time_point> end) {
    if (!end) {
        return callNoArgs("Pause");
    }
    const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(end->time_since_epoch()).count();
    return callMethod(m_bus.get(), "PauseUntil", 0, [&](libsystemd::MessageWriter& out) {
        out.run([&] { return sd_bus_message_set_auto_start(out.message(), 0); });
        out.run([&] {
            return codec::appendValue(out.message(),
                                      static_cast<std::uint64_t>(std::max<std::int64_t>(usec, 0)));
        });
    });
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
    libsystemd::MessageReader in(reply);
    in.enter('a', "{sv}");
    while (in.enter('e', "sv")) {
        const char* name = nullptr;
        if (!in.read("s", &name)) {
            break;
        }
        if (const auto* property = api::findProperty(name)) {
            in.run([&] { return codec::readPropertyVariant(reply, *property, state); });
        } else {
            in.skip("v"); // a newer nicerd's property
        }
        in.exit();
    }
    if (!in.ok()) {
        return libsystemd::busError("cannot read nicerd's status", in.result());
    }
    return state;
}

Result<void> DaemonClient::setParameters(const control::ControllerParams& p) {
    return callMethod(m_bus.get(), "SetParameters", 0, [&](libsystemd::MessageWriter& out) {
        out.run([&] { return codec::appendParameters(out.message(), p); });
    });
}

Result<void> DaemonClient::callWithStrings(const char* method, std::initializer_list<std::string> args,
                                           std::uint64_t timeoutUsec) {
    return callMethod(m_bus.get(), method, timeoutUsec, [&](libsystemd::MessageWriter& out) {
        for (const auto& arg : args) {
            out.append("s", arg.c_str());
        }
    });
}

Result<void> DaemonClient::setWorkloadPreset(const std::string& id) {
    return callWithStrings("SetWorkloadPreset", {id});
}

Result<void> DaemonClient::setExclusivePrograms(const std::vector<std::string>& names) {
    return callMethod(m_bus.get(), "SetExclusivePrograms", 0, [&](libsystemd::MessageWriter& out) {
        out.run([&] { return codec::appendValue(out.message(), names); });
    });
}

namespace {
constexpr auto kBoincAttachTimeoutUsec =
    static_cast<std::uint64_t>(std::chrono::microseconds(api::kBoincCallTimeout).count());
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
    r = codec::readValue(reply, samples);
    if (r < 0) {
        return libsystemd::busError("cannot read nicerd's history", r);
    }
    return samples;
}

} // namespace nicer::dbus
