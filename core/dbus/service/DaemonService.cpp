#include "dbus/service/DaemonService.h"

#include "api/BusNames.h"
#include "api/DaemonProperties.h"
#include "dbus/wire/Codec.h"
#include "dbus/wire/ParameterArguments.h"

#include <cerrno>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace nicer::dbus {

namespace {

constexpr const char* kInvalidArgs = "org.freedesktop.DBus.Error.InvalidArgs";
constexpr const char* kFailed = "org.freedesktop.DBus.Error.Failed";

/// The D-Bus error name of a failed request, by the failure's kind (its message says what was wrong);
/// @p unavailable names a request whose means are not there now, for a client to tell it apart.
const char* errorName(const Error& failure, const char* unavailable = kFailed) {
    switch (failure.kind) {
    case ErrorKind::Failed:
        break;
    case ErrorKind::InvalidInput:
        return kInvalidArgs;
    case ErrorKind::Unavailable:
        return unavailable;
    }
    return kFailed;
}

int replyError(sd_bus_error* error, const Error& failure, const char* unavailable = kFailed) {
    return sd_bus_error_set(error, errorName(failure, unavailable), failure.message.c_str());
}

/// Reads a method's string arguments into @p out; a clear InvalidArgs when one is missing (their content
/// is checked where it is used).
int readStrings(sd_bus_message* m, const char* method, std::initializer_list<std::string*> out,
                sd_bus_error* error) {
    for (std::string* value : out) {
        const char* text = nullptr;
        if (int r = sd_bus_message_read(m, "s", &text); r < 0) {
            return sd_bus_error_setf(error, kInvalidArgs, "%s takes %zu strings: %s", method, out.size(),
                                     std::strerror(-r));
        }
        *value = text;
    }
    return 0;
}

} // namespace

namespace {

libsystemd::PropertyChanges changesOf(api::Announce announce) {
    switch (announce) {
    case api::Announce::Never:
        return libsystemd::PropertyChanges::Constant;
    case api::Announce::OnChange:
        return libsystemd::PropertyChanges::Announced;
    case api::Announce::PerPeriod:
        break;
    }
    return libsystemd::PropertyChanges::Read;
}

} // namespace

libsystemd::BusInterface DaemonService::members() {
    libsystemd::BusInterface members;
    for (const auto& property : api::daemonProperties()) {
        members.properties.push_back({property.name, api::signatureOf(property), changesOf(property.announce),
                                      [this, &property](sd_bus_message* reply, sd_bus_error*) {
                                          return codec::appendProperty(reply, property, stateFor(reply));
                                      }});
    }
    // A method without arguments that runs a command of the daemon.
    const auto command = [this](std::function<Result<void>()> run) {
        return [this, run = std::move(run)](sd_bus_message* call, sd_bus_error* error) {
            return answer(call, error, run(), kFailed);
        };
    };
    members.methods = {
        {"Pause", "", "", command([this] { return m_daemon.pause(); })},
        {"PauseUntil", "t", "",
         [this](sd_bus_message* call, sd_bus_error* error) {
             std::uint64_t until = 0;
             if (int r = codec::readValue(call, until); r < 0) {
                 return sd_bus_error_setf(error, kInvalidArgs, "PauseUntil takes t: %s", std::strerror(-r));
             }
             // Microseconds since 1970, as PausedUntil and the samples' times are.
             const auto end = std::chrono::system_clock::time_point(
                 std::chrono::duration_cast<std::chrono::system_clock::duration>(
                     std::chrono::microseconds(until)));
             return answer(call, error, m_daemon.pause(end), kFailed);
         }},
        {"Resume", "", "", command([this] { return m_daemon.resume(); })},
        {"SetParameters", "a{sv}", "",
         [this](sd_bus_message* call, sd_bus_error* error) {
             std::vector<ParameterArgument> arguments;
             if (int r = codec::readParameterArguments(call, arguments); r < 0) {
                 return sd_bus_error_setf(error, kInvalidArgs, "SetParameters takes a{sv}: %s",
                                          std::strerror(-r));
             }
             // All or nothing: nothing changes unless every value is valid together.
             const auto params = applyParameterArguments(m_daemon.state().params, arguments);
             if (!params) {
                 return replyError(error, params.error());
             }
             return answer(call, error, m_daemon.setParams(*params), kFailed);
         }},
        {"SetWorkloadPreset", "s", "",
         [this](sd_bus_message* call, sd_bus_error* error) {
             std::string id;
             if (const int r = readStrings(call, "SetWorkloadPreset", {&id}, error); r < 0) {
                 return r;
             }
             return answer(call, error, m_daemon.setWorkloadPreset(id), api::kWorkloadUnavailableError);
         }},
        {"SetExclusivePrograms", "as", "",
         [this](sd_bus_message* call, sd_bus_error* error) {
             std::vector<std::string> names;
             if (int r = codec::readValue(call, names); r < 0) {
                 return sd_bus_error_setf(error, kInvalidArgs, "SetExclusivePrograms takes as: %s",
                                          std::strerror(-r));
             }
             return answer(call, error, m_daemon.setExclusivePrograms(names), kFailed);
         }},
        {"GetHistory", "", std::string(api::kArraySignature<api::Sample>),
         [this](sd_bus_message* call, sd_bus_error*) { return getHistory(call); }},
        {"BoincAttach", "ss", "",
         [this](sd_bus_message* call, sd_bus_error* error) {
             std::string url, key;
             if (const int r = readStrings(call, "BoincAttach", {&url, &key}, error); r < 0) {
                 return r;
             }
             return startBoincRequest(call, error,
                                      [&](Done done) { m_daemon.boinc().attach(url, key, std::move(done)); });
         }},
        {"BoincAttachAccountManager", "sss", "",
         [this](sd_bus_message* call, sd_bus_error* error) {
             std::string url, name, password;
             if (const int r =
                     readStrings(call, "BoincAttachAccountManager", {&url, &name, &password}, error);
                 r < 0) {
                 return r;
             }
             return startBoincRequest(call, error, [&](Done done) {
                 m_daemon.boinc().attachAccountManager(url, name, password, std::move(done));
             });
         }},
        {"BoincDetach", "s", "",
         [this](sd_bus_message* call, sd_bus_error* error) {
             std::string url;
             if (const int r = readStrings(call, "BoincDetach", {&url}, error); r < 0) {
                 return r;
             }
             return startBoincRequest(call, error,
                                      [&](Done done) { m_daemon.boinc().detach(url, std::move(done)); });
         }},
    };
    members.busSignals = {{"Sample", std::string(api::kFieldsSignature<api::Sample>)}};
    return members;
}

Result<std::unique_ptr<DaemonService>> DaemonService::publish(sd_bus* bus, daemon::DaemonControl& daemon) {
    auto service = std::unique_ptr<DaemonService>(new DaemonService(bus, daemon));
    auto object = libsystemd::BusObject::publish(bus, api::kObjectPath, api::kInterface, service->members());
    if (!object) {
        return Error{"cannot publish nicerd's D-Bus object: " + object.error().message};
    }
    service->m_object = std::move(*object);
    const int r = sd_bus_request_name(bus, api::kBusName, 0);
    if (r == -EEXIST || r == -EALREADY) {
        return Error{std::string("another nicerd is already running for this user (it owns ") +
                     api::kBusName +
                     " on the session bus); use `nicer status` to talk to it, or stop it first"};
    }
    if (r < 0) {
        return libsystemd::busError(std::string("cannot take the D-Bus name ") + api::kBusName, r);
    }
    return service;
}

const api::DaemonState& DaemonService::stateFor(sd_bus_message* reply) {
    // Held until the next reply, so that no other message can have the same address meanwhile.
    if (m_readFor.get() != reply) {
        m_read = m_daemon.state();
        m_readFor.reset(sd_bus_message_ref(reply));
    }
    return m_read;
}

int DaemonService::answer(sd_bus_message* call, sd_bus_error* error, const Result<void>& done,
                          const char* unavailable) {
    if (!done) {
        return replyError(error, done.error(), unavailable);
    }
    announceChanges();
    return sd_bus_reply_method_return(call, "");
}

int DaemonService::getHistory(sd_bus_message* call) {
    sd_bus_message* reply = nullptr;
    const int r = sd_bus_message_new_method_return(call, &reply);
    libsystemd::BusMessagePtr owned(reply);
    if (r < 0) {
        return r;
    }
    const auto& history = m_daemon.history();
    if (const int appended =
            codec::appendValue(reply, std::vector<api::Sample>(history.begin(), history.end()));
        appended < 0) {
        return appended;
    }
    return sd_bus_send(nullptr, reply, nullptr);
}

int DaemonService::startBoincRequest(sd_bus_message* call, sd_bus_error* error,
                                     const std::function<void(Done)>& request) {
    const auto boinc = m_daemon.state().boinc;
    switch (boinc.state) {
    case api::BoincState::Held:
        return sd_bus_error_setf(
            error, api::kBoincUnavailableError,
            "nicerd holds the BOINC client, frozen with its work (%s): try again when it runs",
            boinc.detail.c_str());
    case api::BoincState::Off:
        return sd_bus_error_set(error, api::kBoincUnavailableError,
                                "no BOINC client runs under nicerd: choose the boinc workload first (nicer "
                                "workload boinc, or the preset in the tray's window)");
    case api::BoincState::Starting:
        return sd_bus_error_set(
            error, api::kBoincUnavailableError,
            "nicerd's BOINC client is starting and does not answer yet: try again in a few "
            "seconds");
    case api::BoincState::Running:
    case api::BoincState::Suspended:
    case api::BoincState::Error:
        break;
    }
    // The reply goes out when BOINC has answered; the message is kept until then.
    auto kept = std::make_shared<libsystemd::BusMessagePtr>(sd_bus_message_ref(call));
    request([kept](const Result<void>& done) {
        if (done) {
            sd_bus_reply_method_return(kept->get(), "");
        } else {
            sd_bus_reply_method_errorf(kept->get(), errorName(done.error(), api::kBoincUnavailableError),
                                       "%s", done.error().message.c_str());
        }
    });
    return 1;
}

void DaemonService::onStateChanged() {
    announceChanges();
}

void DaemonService::announceChanges() {
    api::DaemonState now = m_daemon.state();
    std::vector<char*> names;
    for (const auto& property : api::daemonProperties()) {
        if (property.announce == api::Announce::OnChange && !api::sameValue(property, now, m_announced)) {
            names.push_back(const_cast<char*>(property.name));
        }
    }
    if (names.empty()) {
        return;
    }
    names.push_back(nullptr);
    // Sent with the values (the properties are EMITS_CHANGE): the getter runs for each name now. When the
    // bus cannot take it, the next call tries again.
    if (sd_bus_emit_properties_changed_strv(m_bus, api::kObjectPath, api::kInterface, names.data()) >= 0) {
        m_announced = std::move(now);
    }
}

void DaemonService::onSample(const api::Sample& s) {
    sd_bus_message* message = nullptr;
    if (sd_bus_message_new_signal(m_bus, &message, api::kObjectPath, api::kInterface, "Sample") < 0) {
        return;
    }
    libsystemd::BusMessagePtr owned(message);
    if (codec::appendFields(message, s) >= 0) {
        sd_bus_send(m_bus, message, nullptr);
    }
    announceChanges();
}

} // namespace nicer::dbus
