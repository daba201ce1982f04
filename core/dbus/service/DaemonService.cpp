#include "dbus/service/DaemonService.h"

#include "api/BusNames.h"
#include "api/Placement.h"
#include "control/ControllerParams.h"
#include "control/ParameterTable.h"
#include "dbus/client/Codec.h"
#include "dbus/client/ParameterArguments.h"
#include "workload/WorkloadChooser.h"

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

// The vtable needs its signatures as constants: these are api/BusNames.h's, checked here.
constexpr bool isArrayOf(std::string_view array, std::string_view fields) {
    return array.size() == fields.size() + 3 && array.substr(0, 2) == "a(" &&
           array.substr(2, fields.size()) == fields && array.back() == ')';
}
constexpr const char kPresetsType[] = "a(sssb)";
constexpr const char kDownloadsType[] = "a(sttdsbsx)";
constexpr const char kHistoryType[] = "a(tddddddubb)";
constexpr const char kBoincProjectsType[] = "a(ssdddbbb)";
constexpr const char kBoincTasksType[] = "a(sssdddx)";
constexpr const char kBoincTransfersType[] = "a(ssbddds)";
constexpr const char kBoincNoticesType[] = "a(xxsssb)";
static_assert(isArrayOf(kPresetsType, api::kPresetSignature));
static_assert(isArrayOf(kDownloadsType, api::kDownloadSignature));
static_assert(isArrayOf(kHistoryType, api::kSampleSignature));
static_assert(isArrayOf(kBoincProjectsType, api::kBoincProjectSignature));
static_assert(isArrayOf(kBoincTasksType, api::kBoincTaskSignature));
static_assert(isArrayOf(kBoincTransfersType, api::kBoincTransferSignature));
static_assert(isArrayOf(kBoincNoticesType, api::kBoincNoticeSignature));

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

const sd_bus_vtable DaemonService::s_vtable[] = {
    // The controller's parameters come first, from their table (vtable() above).
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("ApiVersion", "u", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    // State; these change every period and are announced by the Sample signal instead.
    SD_BUS_PROPERTY("Paused", "b", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    // The actuator changes only when nicerd finds the slice's quota not enforced and falls back.
    SD_BUS_PROPERTY("Actuator", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("ActuatorNote", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    // The placement is chosen once, when nicerd starts.
    SD_BUS_PROPERTY("Placement", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("PlacementNote", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    // The memory limit is set once, when the slice is.
    SD_BUS_PROPERTY("MemoryMaxPercent", "d", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("MemoryMax", "t", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Workload", "as", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("DemoWorkload", "b", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Instances", "u", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("WorkloadPreset", "s", &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    // Whether a preset's program is installed can change at any time, unannounced: read it when needed.
    SD_BUS_PROPERTY("WorkloadPresets", kPresetsType, &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("CpuCount", "u", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Quota", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Multiplier", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("OverloadCount", "u", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Idle", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Foreground", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Outside", "d", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("Signal", "s", &DaemonService::getProperty, 0, 0),
    SD_BUS_PROPERTY("SignalSetting", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Background", "d", &DaemonService::getProperty, 0, 0),
    // These change at any moment; announceChanges() sends their new values at most once a period.
    SD_BUS_PROPERTY("LastError", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Downloads", kDownloadsType, &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("DownloadRate", "d", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BandwidthMode", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("BandwidthCap", "t", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    // The BOINC client: its state is announced when it changes, its rates and lists once a period at most.
    SD_BUS_PROPERTY("BoincState", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BoincDetail", "s", &DaemonService::getProperty, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BoincSystemService", "s", &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BoincOverrideApplied", "b", &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BoincMaxDownRate", "d", &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BoincMaxUpRate", "d", &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BoincProjects", kBoincProjectsType, &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BoincTasks", kBoincTasksType, &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BoincTransfers", kBoincTransfersType, &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BoincNotices", kBoincNoticesType, &DaemonService::getProperty, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD("Pause", "", "", &DaemonService::onPause, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Resume", "", "", &DaemonService::onResume, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetParameters", "a{sv}", "", &DaemonService::onSetParameters, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetWorkloadPreset", "s", "", &DaemonService::onSetWorkloadPreset,
                  SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetHistory", "", kHistoryType, &DaemonService::onGetHistory, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("BoincAttach", "ss", "", &DaemonService::onBoincAttach, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("BoincAttachAccountManager", "sss", "", &DaemonService::onBoincAttachAccountManager,
                  SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("BoincDetach", "s", "", &DaemonService::onBoincDetach, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("Sample", api::kSampleSignature, 0),
    SD_BUS_VTABLE_END,
};

/// The object's table: the controller's parameters from control::parameterTable(), then the rest. Built
/// once; sd-bus keeps pointing at it.
const sd_bus_vtable* DaemonService::vtable() {
    static const std::vector<sd_bus_vtable> table = [] {
        std::vector<sd_bus_vtable> v;
        v.push_back(SD_BUS_VTABLE_START(0));
        for (const auto& info : control::parameterTable()) {
            v.push_back(SD_BUS_PROPERTY(info.busName, info.busSignature, &getProperty, 0,
                                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE));
        }
        for (const auto& entry : s_vtable) {
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

int DaemonService::getProperty(sd_bus*, const char*, const char*, const char* property, sd_bus_message* reply,
                               void* userdata, sd_bus_error* error) noexcept {
    return guarded(error, [&]() -> int {
        const auto& d = static_cast<DaemonService*>(userdata)->m_daemon;
        const auto& p = d.params();
        const auto& st = d.controllerState();
        const auto& last = d.lastSample();
        const std::string_view name = property;
        if (const auto* info = control::findBusParameter(name)) {
            return codec::appendParameter(reply, *info, p);
        }
        if (name == "ApiVersion") {
            return sd_bus_message_append(reply, "u", api::kApiVersion);
        }
        if (name == "Paused") {
            return sd_bus_message_append(reply, "b", static_cast<int>(d.paused()));
        }
        if (name == "Actuator") {
            return sd_bus_message_append(reply, "s", d.actuatorName().c_str());
        }
        if (name == "ActuatorNote") {
            return sd_bus_message_append(reply, "s", d.actuatorNote().c_str());
        }
        if (name == "Placement") {
            return sd_bus_message_append(reply, "s", std::string(api::placementName(d.placement())).c_str());
        }
        if (name == "PlacementNote") {
            return sd_bus_message_append(reply, "s", d.placementNote().c_str());
        }
        if (name == "MemoryMaxPercent") {
            return sd_bus_message_append(reply, "d", d.memoryMaxPercent());
        }
        if (name == "MemoryMax") {
            return sd_bus_message_append(reply, "t", d.memoryMaxBytes());
        }
        if (name == "DemoWorkload") {
            return sd_bus_message_append(reply, "b", static_cast<int>(d.workload().demo));
        }
        if (name == "Instances") {
            return sd_bus_message_append(reply, "u", static_cast<std::uint32_t>(d.workload().instances));
        }
        if (name == "WorkloadPreset") {
            return sd_bus_message_append(reply, "s", d.workload().preset.c_str());
        }
        if (name == "CpuCount") {
            return sd_bus_message_append(reply, "u", static_cast<std::uint32_t>(d.cpuCount()));
        }
        if (name == "Quota") {
            return sd_bus_message_append(reply, "d", last ? last->quota : 0.0);
        }
        if (name == "Multiplier") {
            return sd_bus_message_append(reply, "d", st.multiplier);
        }
        if (name == "OverloadCount") {
            return sd_bus_message_append(reply, "u", static_cast<std::uint32_t>(st.overloadCount));
        }
        if (name == "Idle") {
            return sd_bus_message_append(reply, "d", last ? last->idle : 0.0);
        }
        if (name == "Foreground") {
            return sd_bus_message_append(reply, "d", last ? last->foreground : 0.0);
        }
        if (name == "Background") {
            return sd_bus_message_append(reply, "d", last ? last->background : 0.0);
        }
        if (name == "Outside") {
            return sd_bus_message_append(reply, "d", last ? last->outside : -1.0);
        }
        if (name == "Signal") {
            const auto answered =
                last && last->outsideSignal ? control::Signal::Outside : control::Signal::Machine;
            return sd_bus_message_append(reply, "s", std::string(control::signalName(answered)).c_str());
        }
        if (name == "SignalSetting") {
            return sd_bus_message_append(reply, "s",
                                         std::string(control::signalName(d.signalSetting())).c_str());
        }
        if (name == "LastError") {
            return sd_bus_message_append(reply, "s", d.lastError().c_str());
        }
        if (name == "DownloadRate") {
            return sd_bus_message_append(reply, "d", d.downloadRate());
        }
        if (name == "BandwidthMode") {
            return sd_bus_message_append(
                reply, "s", std::string(api::bandwidthKindKeyword(d.bandwidthMode().kind)).c_str());
        }
        if (name == "BandwidthCap") {
            return sd_bus_message_append(reply, "t", d.bandwidthMode().capBytesPerSecond.value_or(0));
        }
        if (name == "Downloads") {
            return codec::appendArray(reply, d.downloads());
        }
        if (name == "Workload") {
            int r = sd_bus_message_open_container(reply, 'a', "s");
            for (const auto& arg : d.workload().argv) {
                if (r >= 0) {
                    r = sd_bus_message_append(reply, "s", arg.c_str());
                }
            }
            return r < 0 ? r : sd_bus_message_close_container(reply);
        }
        if (name == "WorkloadPresets") {
            return codec::appendArray(reply, d.presets());
        }
        if (name.starts_with("Boinc")) {
            const auto boinc = d.boincStatus();
            if (name == "BoincState") {
                return sd_bus_message_append(reply, "s", boinc.state.c_str());
            }
            if (name == "BoincDetail") {
                return sd_bus_message_append(reply, "s", boinc.detail.c_str());
            }
            if (name == "BoincSystemService") {
                return sd_bus_message_append(reply, "s", boinc.systemService.c_str());
            }
            if (name == "BoincOverrideApplied") {
                return sd_bus_message_append(reply, "b", static_cast<int>(boinc.overrideApplied));
            }
            if (name == "BoincMaxDownRate") {
                return sd_bus_message_append(reply, "d", boinc.maxDownRate);
            }
            if (name == "BoincMaxUpRate") {
                return sd_bus_message_append(reply, "d", boinc.maxUpRate);
            }
            if (name == "BoincProjects") {
                return codec::appendArray(reply, boinc.projects);
            }
            if (name == "BoincTasks") {
                return codec::appendArray(reply, boinc.tasks);
            }
            if (name == "BoincTransfers") {
                return codec::appendArray(reply, boinc.transfers);
            }
            if (name == "BoincNotices") {
                return codec::appendArray(reply, boinc.notices);
            }
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
        std::vector<ParameterArgument> arguments;
        if (int r = codec::readParameterArguments(m, arguments); r < 0) {
            return sd_bus_error_setf(error, kInvalidArgs, "SetParameters takes a{sv}: %s", std::strerror(-r));
        }
        // All or nothing: nothing changes unless every value is valid together.
        const auto params = applyParameterArguments(self->m_daemon.params(), arguments);
        if (!params) {
            return sd_bus_error_set(error, kInvalidArgs, params.error().message.c_str());
        }
        if (auto set = self->m_daemon.setParams(*params); !set) {
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
        libsystemd::BusMessagePtr owned(reply);
        const auto& history = self->m_daemon.history();
        if (r >= 0) {
            r = codec::appendArray(reply, std::vector<api::Sample>(history.begin(), history.end()));
        }
        if (r >= 0) {
            r = sd_bus_send(nullptr, reply, nullptr);
        }
        return r;
    });
}

int DaemonService::startBoincRequest(sd_bus_message* m, sd_bus_error* error,
                                     const std::function<void(daemon::DaemonControl::BoincDone)>& request) {
    const auto boinc = m_daemon.boincStatus();
    const auto& state = boinc.state;
    if (state == "held") {
        return sd_bus_error_setf(
            error, api::kBoincUnavailableError,
            "nicerd holds the BOINC client, frozen with its work (%s): try again when it runs",
            boinc.detail.c_str());
    }
    if (state == "off" || state == "starting") {
        return sd_bus_error_set(error, api::kBoincUnavailableError,
                                state == "off"
                                    ? "no BOINC client runs under nicerd: choose the boinc workload "
                                      "first (nicer workload boinc, or the preset in the tray's window)"
                                    : "nicerd's BOINC client is starting and does not answer yet: "
                                      "try again in a few seconds");
    }
    // The reply goes out when BOINC has answered; the message is kept until then.
    auto call = std::make_shared<libsystemd::BusMessagePtr>(sd_bus_message_ref(m));
    request([call](const Result<void>& done) {
        if (done) {
            sd_bus_reply_method_return(call->get(), "");
        } else {
            sd_bus_reply_method_errorf(call->get(), kFailed, "%s", done.error().message.c_str());
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
        return self->startBoincRequest(m, error, [&](daemon::DaemonControl::BoincDone done) {
            self->m_daemon.boincAttach(url, key, std::move(done));
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
        return self->startBoincRequest(m, error, [&](daemon::DaemonControl::BoincDone done) {
            self->m_daemon.boincAttachAccountManager(url, name, password, std::move(done));
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
        return self->startBoincRequest(m, error, [&](daemon::DaemonControl::BoincDone done) {
            self->m_daemon.boincDetach(url, std::move(done));
        });
    });
}

void DaemonService::onBoincStateChanged() {
    announceChanges();
}

DaemonService::Announced DaemonService::announced() const {
    return {m_daemon.lastError(), m_daemon.downloads(), m_daemon.downloadRate(), m_daemon.boincStatus()};
}

void DaemonService::announceChanges() {
    Announced now = announced();
    const Announced& was = m_announced;
    std::vector<char*> names;
    const auto changed = [&](bool differs, const char* name) {
        if (differs) {
            names.push_back(const_cast<char*>(name));
        }
    };
    changed(now.lastError != was.lastError, "LastError");
    changed(now.downloads != was.downloads, "Downloads");
    changed(now.downloadRate != was.downloadRate, "DownloadRate");
    const api::BoincStatus& b = now.boinc;
    const api::BoincStatus& o = was.boinc;
    changed(b.state != o.state, "BoincState");
    changed(b.detail != o.detail, "BoincDetail");
    changed(b.systemService != o.systemService, "BoincSystemService");
    changed(b.overrideApplied != o.overrideApplied, "BoincOverrideApplied");
    changed(b.maxDownRate != o.maxDownRate, "BoincMaxDownRate");
    changed(b.maxUpRate != o.maxUpRate, "BoincMaxUpRate");
    changed(b.projects != o.projects, "BoincProjects");
    changed(b.tasks != o.tasks, "BoincTasks");
    changed(b.transfers != o.transfers, "BoincTransfers");
    changed(b.notices != o.notices, "BoincNotices");
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

void DaemonService::onActuatorChanged() {
    sd_bus_emit_properties_changed(m_bus, api::kObjectPath, api::kInterface, "Actuator", "ActuatorNote",
                                   nullptr);
}

void DaemonService::onSample(const api::Sample& s) {
    sd_bus_message* message = nullptr;
    if (sd_bus_message_new_signal(m_bus, &message, api::kObjectPath, api::kInterface, "Sample") < 0) {
        return;
    }
    libsystemd::BusMessagePtr owned(message);
    if (codec::appendSampleFields(message, s) >= 0) {
        sd_bus_send(m_bus, message, nullptr);
    }
    announceChanges();
}

void DaemonService::emitParametersChanged() {
    std::vector<char*> names;
    for (const auto& info : control::parameterTable()) {
        names.push_back(const_cast<char*>(info.busName));
    }
    names.push_back(const_cast<char*>("Paused"));
    names.push_back(nullptr);
    sd_bus_emit_properties_changed_strv(m_bus, api::kObjectPath, api::kInterface, names.data());
}

void DaemonService::emitWorkloadChanged() {
    sd_bus_emit_properties_changed(m_bus, api::kObjectPath, api::kInterface, "Workload", "DemoWorkload",
                                   "Instances", "WorkloadPreset", nullptr);
}

} // namespace nicer::dbus
