#include "dbus/service/DaemonService.h"

#include "api/BusNames.h"
#include "api/DaemonProperties.h"
#include "dbus/wire/Codec.h"
#include "dbus/wire/ParameterArguments.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

const sd_bus_vtable DaemonService::s_methods[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Pause", "", "", &DaemonService::onPause, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Resume", "", "", &DaemonService::onResume, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetParameters", "a{sv}", "", &DaemonService::onSetParameters, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetWorkloadPreset", "s", "", &DaemonService::onSetWorkloadPreset,
                  SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetExclusivePrograms", "as", "", &DaemonService::onSetExclusivePrograms,
                  SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetHistory", "", api::kArraySignature<api::Sample>.data(), &DaemonService::onGetHistory,
                  SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("BoincAttach", "ss", "", &DaemonService::onBoincAttach, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("BoincAttachAccountManager", "sss", "", &DaemonService::onBoincAttachAccountManager,
                  SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("BoincDetach", "s", "", &DaemonService::onBoincDetach, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("Sample", api::kFieldsSignature<api::Sample>.data(), 0),
    SD_BUS_VTABLE_END,
};

namespace {

std::uint64_t vtableFlags(api::Announce announce) {
    switch (announce) {
    case api::Announce::Never:
        return SD_BUS_VTABLE_PROPERTY_CONST;
    case api::Announce::OnChange:
        return SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE;
    case api::Announce::PerPeriod:
        break;
    }
    return 0;
}

} // namespace

const sd_bus_vtable* DaemonService::vtable() {
    // Built once; sd-bus keeps pointing at it and at the signatures.
    static const std::vector<std::string> signatures = [] {
        std::vector<std::string> v;
        for (const auto& property : api::daemonProperties()) {
            v.push_back(api::signatureOf(property));
        }
        return v;
    }();
    static const std::vector<sd_bus_vtable> table = [] {
        std::vector<sd_bus_vtable> v;
        v.push_back(SD_BUS_VTABLE_START(0));
        const auto properties = api::daemonProperties();
        for (std::size_t i = 0; i < properties.size(); ++i) {
            v.push_back(SD_BUS_PROPERTY(properties[i].name, signatures[i].c_str(), &getProperty, 0,
                                        vtableFlags(properties[i].announce)));
        }
        for (const auto& entry : s_methods) {
            if (entry.type != _SD_BUS_VTABLE_START) {
                v.push_back(entry);
            }
        }
        return v;
    }();
    return table.data();
}

Result<std::unique_ptr<DaemonService>> DaemonService::publish(sd_bus* bus, daemon::DaemonControl& daemon) {
    auto service = std::unique_ptr<DaemonService>(new DaemonService(bus, daemon));
    sd_bus_slot* slot = nullptr;
    int r = sd_bus_add_object_vtable(bus, &slot, api::kObjectPath, api::kInterface, vtable(), service.get());
    if (r < 0) {
        return libsystemd::busError("cannot publish nicerd's D-Bus object", r);
    }
    service->m_slot.reset(slot);
    r = sd_bus_request_name(bus, api::kBusName, 0);
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

int DaemonService::getProperty(sd_bus*, const char*, const char*, const char* property, sd_bus_message* reply,
                               void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        const auto* info = api::findProperty(property);
        if (info == nullptr) {
            return sd_bus_error_setf(error, "org.freedesktop.DBus.Error.UnknownProperty", "no property %s",
                                     property);
        }
        return codec::appendProperty(reply, *info, self->stateFor(reply));
    });
}

int DaemonService::onPause(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        if (auto paused = self->m_daemon.pause(); !paused) {
            return replyError(error, paused.error());
        }
        self->announceChanges();
        return sd_bus_reply_method_return(m, "");
    });
}

int DaemonService::onResume(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        if (auto resumed = self->m_daemon.resume(); !resumed) {
            return replyError(error, resumed.error());
        }
        self->announceChanges();
        return sd_bus_reply_method_return(m, "");
    });
}

int DaemonService::onSetParameters(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        std::vector<ParameterArgument> arguments;
        if (int r = codec::readParameterArguments(m, arguments); r < 0) {
            return sd_bus_error_setf(error, kInvalidArgs, "SetParameters takes a{sv}: %s", std::strerror(-r));
        }
        // All or nothing: nothing changes unless every value is valid together.
        const auto params = applyParameterArguments(self->m_daemon.state().params, arguments);
        if (!params) {
            return replyError(error, params.error());
        }
        if (auto set = self->m_daemon.setParams(*params); !set) {
            return replyError(error, set.error());
        }
        self->announceChanges();
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
            return replyError(error, set.error(), api::kWorkloadUnavailableError);
        }
        self->announceChanges();
        return sd_bus_reply_method_return(m, "");
    });
}

int DaemonService::onSetExclusivePrograms(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        std::vector<std::string> names;
        if (int r = codec::readValue(m, names); r < 0) {
            return sd_bus_error_setf(error, kInvalidArgs, "SetExclusivePrograms takes as: %s",
                                     std::strerror(-r));
        }
        if (auto set = self->m_daemon.setExclusivePrograms(names); !set) {
            return replyError(error, set.error());
        }
        self->announceChanges();
        return sd_bus_reply_method_return(m, "");
    });
}

int DaemonService::onGetHistory(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        sd_bus_message* reply = nullptr;
        const int r = sd_bus_message_new_method_return(m, &reply);
        libsystemd::BusMessagePtr owned(reply);
        if (r < 0) {
            return r;
        }
        const auto& history = self->m_daemon.history();
        if (const int appended =
                codec::appendValue(reply, std::vector<api::Sample>(history.begin(), history.end()));
            appended < 0) {
            return appended;
        }
        return sd_bus_send(nullptr, reply, nullptr);
    });
}

int DaemonService::startBoincRequest(sd_bus_message* m, sd_bus_error* error,
                                     const std::function<void(daemon::BoincRequests::Done)>& request) {
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
    auto call = std::make_shared<libsystemd::BusMessagePtr>(sd_bus_message_ref(m));
    request([call](const Result<void>& done) {
        if (done) {
            sd_bus_reply_method_return(call->get(), "");
        } else {
            sd_bus_reply_method_errorf(call->get(), errorName(done.error(), api::kBoincUnavailableError),
                                       "%s", done.error().message.c_str());
        }
    });
    return 1;
}

int DaemonService::onBoincAttach(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        std::string url, key;
        if (int r = readStrings(m, "BoincAttach", {&url, &key}, error); r < 0) {
            return r;
        }
        return self->startBoincRequest(m, error, [&](daemon::BoincRequests::Done done) {
            self->m_daemon.boinc().attach(url, key, std::move(done));
        });
    });
}

int DaemonService::onBoincAttachAccountManager(sd_bus_message* m, void* userdata,
                                               sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        std::string url, name, password;
        if (int r = readStrings(m, "BoincAttachAccountManager", {&url, &name, &password}, error); r < 0) {
            return r;
        }
        return self->startBoincRequest(m, error, [&](daemon::BoincRequests::Done done) {
            self->m_daemon.boinc().attachAccountManager(url, name, password, std::move(done));
        });
    });
}

int DaemonService::onBoincDetach(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        auto* self = static_cast<DaemonService*>(userdata);
        std::string url;
        if (int r = readStrings(m, "BoincDetach", {&url}, error); r < 0) {
            return r;
        }
        return self->startBoincRequest(m, error, [&](daemon::BoincRequests::Done done) {
            self->m_daemon.boinc().detach(url, std::move(done));
        });
    });
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
