#include "usermanager/SystemdUnitManager.h"

#include "libsystemd/Message.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <utility>

namespace nicer::usermanager {

namespace {

constexpr const char* kDestination = "org.freedesktop.systemd1";
constexpr const char* kManagerPath = "/org/freedesktop/systemd1";
constexpr const char* kManagerInterface = "org.freedesktop.systemd1.Manager";
constexpr const char* kUnitInterface = "org.freedesktop.systemd1.Unit";
constexpr const char* kJobInterface = "org.freedesktop.systemd1.Job";
constexpr const char* kNoSuchUnit = "org.freedesktop.systemd1.NoSuchUnit";
constexpr const char* kAlreadySubscribed = "org.freedesktop.systemd1.AlreadySubscribed";

// A start or stop job that takes longer than this is stuck (systemd's own default is 90 s per unit, but
// ours are transient slices and services without ExecStartPre/ExecStop).
constexpr auto kJobTimeout = std::chrono::seconds(30);
// An asynchronous write nobody waits for: this only says when one that systemd has not answered counts as
// failed (and the slice actuator holds the work). Longer than the blocking calls' 5 s, which bound a stall.
constexpr std::uint64_t kWriteTimeoutUSec = 10'000'000;

std::string callName(std::string_view method, std::string_view unit) {
    return "systemd " + std::string(method) + "(" + std::string(unit) + ")";
}

/// Frees strings sd-bus hands out with malloc().
struct FreeDeleter {
    void operator()(char* p) const noexcept { std::free(p); }
};
using MallocString = std::unique_ptr<char, FreeDeleter>;

void appendStringArray(libsystemd::MessageWriter& out, const std::vector<std::string>& values) {
    out.open(SD_BUS_TYPE_ARRAY, "s");
    for (const auto& value : values) {
        out.appendBasic(SD_BUS_TYPE_STRING, value.c_str());
    }
    out.close();
}

// One overload per PropertyValue alternative: each appends the variant ("v") of the property.
void appendVariant(libsystemd::MessageWriter& out, bool value) {
    out.append("v", "b", static_cast<int>(value));
}
void appendVariant(libsystemd::MessageWriter& out, std::int32_t value) {
    out.append("v", "i", value);
}
void appendVariant(libsystemd::MessageWriter& out, std::uint32_t value) {
    out.append("v", "u", value);
}
void appendVariant(libsystemd::MessageWriter& out, std::uint64_t value) {
    out.append("v", "t", value);
}
void appendVariant(libsystemd::MessageWriter& out, const std::string& value) {
    out.append("v", "s", value.c_str());
}
void appendVariant(libsystemd::MessageWriter& out, const std::vector<std::string>& values) {
    out.open(SD_BUS_TYPE_VARIANT, "as");
    appendStringArray(out, values);
    out.close();
}
void appendVariant(libsystemd::MessageWriter& out, const std::vector<std::uint32_t>& values) {
    out.open(SD_BUS_TYPE_VARIANT, "au")
        .appendArray(SD_BUS_TYPE_UINT32, values.data(), values.size() * sizeof(std::uint32_t))
        .close();
}
void appendVariant(libsystemd::MessageWriter& out, const std::vector<ExecCommand>& commands) {
    out.open(SD_BUS_TYPE_VARIANT, "a(sasb)").open(SD_BUS_TYPE_ARRAY, "(sasb)");
    for (const auto& command : commands) {
        out.open(SD_BUS_TYPE_STRUCT, "sasb").appendBasic(SD_BUS_TYPE_STRING, command.path.c_str());
        appendStringArray(out, command.argv);
        out.append("b", static_cast<int>(command.ignoreFailure)).close();
    }
    out.close().close();
}

/// Appends a(sv); the error names the property sd-bus refused (e.g. a string that is not UTF-8).
Result<void> appendProperties(sd_bus_message* m, const Properties& props, std::string_view what) {
    libsystemd::MessageWriter out(m);
    if (!out.open(SD_BUS_TYPE_ARRAY, "(sv)").ok()) {
        return libsystemd::busError(what, out.result());
    }
    for (const auto& property : props) {
        // One (sv) entry.
        out.open(SD_BUS_TYPE_STRUCT, "sv").appendBasic(SD_BUS_TYPE_STRING, property.name.c_str());
        std::visit([&out](const auto& value) { appendVariant(out, value); }, property.value);
        if (!out.close().ok()) {
            return libsystemd::busError(std::string(what) + ": property " + property.name, out.result());
        }
    }
    if (!out.close().ok()) {
        return libsystemd::busError(what, out.result());
    }
    return {};
}

/// The per-type interface that carries ControlGroup, CPUUsageNSec and the like, from the unit's suffix.
std::optional<std::string> typeInterface(std::string_view unit) {
    const auto dot = unit.rfind('.');
    if (dot == std::string_view::npos) {
        return std::nullopt;
    }
    const auto suffix = unit.substr(dot + 1);
    for (const auto* type : {"service", "slice", "scope", "socket", "mount", "swap"}) {
        if (suffix == type) {
            std::string name = "org.freedesktop.systemd1.";
            name += static_cast<char>(type[0] - 'a' + 'A');
            name += type + 1;
            return name;
        }
    }
    return std::nullopt;
}

bool isGone(const libsystemd::BusError& error) {
    return error.hasName(SD_BUS_ERROR_UNKNOWN_OBJECT) || error.hasName(SD_BUS_ERROR_UNKNOWN_METHOD) ||
           error.hasName(SD_BUS_ERROR_UNKNOWN_INTERFACE) || error.hasName(SD_BUS_ERROR_UNKNOWN_PROPERTY);
}

Result<std::string> getString(sd_bus* bus, const std::string& path, const char* interface,
                              const char* property, std::string_view what) {
    libsystemd::BusError error;
    char* raw = nullptr;
    const int r =
        sd_bus_get_property_string(bus, kDestination, path.c_str(), interface, property, error.get(), &raw);
    MallocString value(raw);
    if (r < 0) {
        return libsystemd::busError(what, r, error);
    }
    return std::string(value.get());
}

template <typename T>
Result<T> getTrivial(sd_bus* bus, const std::string& path, const char* interface, const char* property,
                     char type, std::string_view what) {
    libsystemd::BusError error;
    T value{};
    const int r = sd_bus_get_property_trivial(bus, kDestination, path.c_str(), interface, property,
                                              error.get(), type, &value);
    if (r < 0) {
        return libsystemd::busError(what, r, error);
    }
    return value;
}

} // namespace

namespace {

constexpr std::uint64_t kCallTimeoutUSec = 5'000'000;

Result<libsystemd::BusPtr> openUserBus() {
    sd_bus* raw = nullptr;
    const int r = sd_bus_open_user(&raw);
    libsystemd::BusPtr bus(raw);
    if (r < 0) {
        return Error{
            "cannot connect to the user bus (sd_bus_open_user): " + libsystemd::busErrorText(r, nullptr) +
            "; nicer needs a systemd user session ($XDG_RUNTIME_DIR/bus or $DBUS_SESSION_BUS_ADDRESS)"};
    }
    sd_bus_set_description(bus.get(), "nicer-units");
    sd_bus_set_method_call_timeout(bus.get(), kCallTimeoutUSec);
    return bus;
}

std::vector<std::string> namesOf(const Properties& props) {
    std::vector<std::string> names;
    names.reserve(props.size());
    for (const auto& property : props) {
        names.push_back(property.name);
    }
    return names;
}

} // namespace

Result<std::unique_ptr<SystemdUnitManager>> SystemdUnitManager::connectUser() {
    auto opened = openUserBus();
    if (!opened) {
        return opened.error();
    }
    libsystemd::BusPtr bus = std::move(*opened);

    // Ask the manager something harmless now, so a missing user manager shows up here and not at the first
    // start of a unit.
    auto version = getString(bus.get(), kManagerPath, kManagerInterface, "Version", "systemd Get Version");
    if (!version) {
        return Error{"no systemd user manager answers on the user bus (" + version.error().message +
                     "); start one with `systemctl --user start` or log in to a systemd session"};
    }
    auto units = std::make_unique<SystemdUnitManager>(std::move(bus));
    units->m_reopens = true;
    return units;
}

SystemdUnitManager::SystemdUnitManager(libsystemd::BusPtr bus)
    : m_bus(std::move(bus)) {}

SystemdUnitManager::~SystemdUnitManager() {
    m_writes.clear(); // no answer is taken any more
    if (m_event) {
        sd_bus_detach_event(m_bus.get());
    }
}

Result<void> SystemdUnitManager::attach(sd_event* event) {
    if (const int r = sd_bus_attach_event(m_bus.get(), event, SD_EVENT_PRIORITY_NORMAL); r < 0) {
        return libsystemd::busError("cannot process the user manager's connection on nicerd's loop", r);
    }
    m_event = event;
    return {};
}

Result<std::string> SystemdUnitManager::managerVersion() {
    drain();
    return getString(m_bus.get(), kManagerPath, kManagerInterface, "Version", "systemd Get Version");
}

Result<std::string> SystemdUnitManager::managerControlGroup() {
    drain();
    return getString(m_bus.get(), kManagerPath, kManagerInterface, "ControlGroup",
                     "systemd Get ControlGroup");
}

void SystemdUnitManager::drain() {
    if (m_reopens && sd_bus_is_open(m_bus.get()) <= 0) {
        // Closed under us (the bus restarted): a call on it would fail at once with ENOTCONN. If the bus is
        // not back yet, the old connection stays and the call fails with that.
        if (auto reopened = openUserBus()) {
            // What was on its way on the old connection is lost (its slots go before it): sent again by
            // whoever takes the failure.
            for (auto& [unit, writes] : m_writes) {
                auto lost = namesOf(writes.queued);
                if (writes.inFlight) {
                    lost.insert(lost.end(), writes.inFlightOf.begin(), writes.inFlightOf.end());
                }
                writes.fail(lost, Error{callName("SetUnitProperties", unit) +
                                        ": the user bus closed before systemd answered"});
                writes.inFlight.reset();
                writes.queued.clear();
            }
            if (m_event) {
                sd_bus_detach_event(m_bus.get());
            }
            m_bus = std::move(*reopened);
            m_subscribed = false;
            if (m_event) {
                (void)sd_bus_attach_event(m_bus.get(), m_event, SD_EVENT_PRIORITY_NORMAL);
            }
        }
    }
    if (m_event) {
        return; // the loop dispatches it
    }
    // Bounded: a busy bus must not keep us here; what remains is dispatched next time.
    for (int i = 0; i < 256; ++i) {
        if (sd_bus_process(m_bus.get(), nullptr) <= 0) {
            break;
        }
    }
}

Result<std::string> SystemdUnitManager::unitPath(const std::string& name) {
    drain();
    libsystemd::BusError error;
    sd_bus_message* raw = nullptr;
    const int r = sd_bus_call_method(m_bus.get(), kDestination, kManagerPath, kManagerInterface, "GetUnit",
                                     error.get(), &raw, "s", name.c_str());
    libsystemd::BusMessagePtr reply(raw);
    if (r < 0) {
        if (error.hasName(kNoSuchUnit)) {
            return std::string();
        }
        return libsystemd::busError(callName("GetUnit", name), r, error);
    }
    const char* path = nullptr;
    const int rr = sd_bus_message_read(reply.get(), "o", &path);
    if (rr < 0) {
        return libsystemd::busError(callName("GetUnit", name) + ": reading the reply", rr);
    }
    return std::string(path);
}

Result<libsystemd::BusSlotPtr> SystemdUnitManager::watchJobs(bool wait, std::string_view what) {
    if (!wait) {
        return libsystemd::BusSlotPtr();
    }
    // systemd sends its signals to the bus only while someone is subscribed.
    if (!m_subscribed) {
        libsystemd::BusError error;
        const int r = sd_bus_call_method(m_bus.get(), kDestination, kManagerPath, kManagerInterface,
                                         "Subscribe", error.get(), nullptr, "");
        if (r < 0 && !error.hasName(kAlreadySubscribed)) {
            return libsystemd::busError(std::string(what) + ": subscribing to the manager's signals", r,
                                        error);
        }
        m_subscribed = true;
    }
    m_removedJobs.clear();
    sd_bus_slot* raw = nullptr;
    const int r = sd_bus_match_signal(m_bus.get(), &raw, kDestination, kManagerPath, kManagerInterface,
                                      "JobRemoved", &SystemdUnitManager::onJobRemoved, this);
    libsystemd::BusSlotPtr slot(raw);
    if (r < 0) {
        return libsystemd::busError(std::string(what) + ": watching for the end of its job", r);
    }
    return slot;
}

int SystemdUnitManager::onJobRemoved(sd_bus_message* signal, void* userdata, sd_bus_error*) noexcept {
    std::uint32_t id = 0;
    const char* job = nullptr;
    const char* unit = nullptr;
    const char* result = nullptr;
    if (sd_bus_message_read(signal, "uoss", &id, &job, &unit, &result) < 0) {
        return 0;
    }
    try {
        static_cast<SystemdUnitManager*>(userdata)->m_removedJobs[job] = result;
    } catch (...) {
        // Out of memory: the wait ends at its timeout, where the job's state is looked at.
    }
    return 0;
}

Result<std::string> SystemdUnitManager::waitForJob(const std::string& jobPath, std::string_view what) {
    const auto deadline = std::chrono::steady_clock::now() + kJobTimeout;
    for (;;) {
        if (const auto removed = m_removedJobs.find(jobPath); removed != m_removedJobs.end()) {
            return removed->second;
        }
        // Dispatches what came (the JobRemoved signals, answers to writes); our own loop's iteration, not
        // the event loop's, so it works inside any callback.
        const int r = sd_bus_process(m_bus.get(), nullptr);
        if (r < 0) {
            return libsystemd::busError(std::string(what) + ": waiting for job " + jobPath, r);
        }
        if (r > 0) {
            continue;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            break;
        }
        const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now);
        if (const int w = sd_bus_wait(m_bus.get(), static_cast<std::uint64_t>(left.count()));
            w < 0 && w != -EINTR) {
            return libsystemd::busError(std::string(what) + ": waiting for job " + jobPath, w);
        }
    }
    // No JobRemoved: the job object tells whether it is still there.
    libsystemd::BusError error;
    char* raw = nullptr;
    const int r = sd_bus_get_property_string(m_bus.get(), kDestination, jobPath.c_str(), kJobInterface,
                                             "State", error.get(), &raw);
    MallocString state(raw);
    if (r < 0) {
        // systemd drops the job object once the job has finished: its signal was lost, the unit's state
        // tells the rest.
        if (isGone(error)) {
            return std::string("done");
        }
        return libsystemd::busError(std::string(what) + ": waiting for job " + jobPath, r, error);
    }
    return Error{std::string(what) + ": job " + jobPath + " is still " + state.get() + " after " +
                 std::to_string(kJobTimeout.count()) +
                 " s; see `systemctl --user list-jobs` for what it waits on"};
}

Result<void> SystemdUnitManager::startTransientUnit(const std::string& name, const Properties& props,
                                                    bool wait) {
    drain();
    const auto what = callName("StartTransientUnit", name);
    sd_bus_message* rawCall = nullptr;
    int r = sd_bus_message_new_method_call(m_bus.get(), &rawCall, kDestination, kManagerPath,
                                           kManagerInterface, "StartTransientUnit");
    libsystemd::BusMessagePtr call(rawCall);
    if (r < 0) {
        return libsystemd::busError(what, r);
    }
    r = sd_bus_message_append(call.get(), "ss", name.c_str(), "fail");
    if (r < 0) {
        return libsystemd::busError(what, r);
    }
    if (auto appended = appendProperties(call.get(), props, what); !appended) {
        return appended;
    }
    r = sd_bus_message_append(call.get(), "a(sa(sv))", 0);
    if (r < 0) {
        return libsystemd::busError(what, r);
    }
    auto jobs = watchJobs(wait, what);
    if (!jobs) {
        return jobs.error();
    }

    libsystemd::BusError error;
    sd_bus_message* rawReply = nullptr;
    r = sd_bus_call(m_bus.get(), call.get(), 0, error.get(), &rawReply);
    libsystemd::BusMessagePtr reply(rawReply);
    if (r < 0) {
        return libsystemd::busError(what, r, error);
    }
    return awaitStart(reply.get(), name, what, wait);
}

Result<void> SystemdUnitManager::startUnit(const std::string& name, bool wait) {
    drain();
    const auto what = callName("StartUnit", name);
    auto jobs = watchJobs(wait, what);
    if (!jobs) {
        return jobs.error();
    }
    libsystemd::BusError error;
    sd_bus_message* raw = nullptr;
    const int r = sd_bus_call_method(m_bus.get(), kDestination, kManagerPath, kManagerInterface, "StartUnit",
                                     error.get(), &raw, "ss", name.c_str(), "replace");
    libsystemd::BusMessagePtr reply(raw);
    if (r < 0) {
        return libsystemd::busError(what, r, error);
    }
    return awaitStart(reply.get(), name, what, wait);
}

Result<void> SystemdUnitManager::awaitStart(sd_bus_message* reply, const std::string& name,
                                            const std::string& what, bool wait) {
    const char* job = nullptr;
    if (const int r = sd_bus_message_read(reply, "o", &job); r < 0) {
        return libsystemd::busError(what + ": reading the reply", r);
    }
    if (!wait) {
        return {};
    }
    auto jobResult = waitForJob(job, what);
    if (!jobResult) {
        return jobResult.error();
    }
    // The unit's state says more than the job's result: a service that failed at once after a "done" start
    // job, its own Result. The job's result is told where the state is not what was wanted.
    const std::string ended =
        *jobResult == "done" ? std::string() : " (the job ended \"" + *jobResult + "\")";

    auto state = activeState(name);
    if (!state) {
        return Error{what + ": started, but its state is unknown: " + state.error().message};
    }
    if (*state == UnitState::Inactive) {
        // A unit that failed is "failed" only until systemd collects it, which CollectMode=inactive-or-failed
        // does before our first look; so a start that ends inactive failed or exited at once.
        return Error{what + ": the unit is inactive right after its start job" + ended +
                     ": it failed or exited at once; " +
                     "see the user manager's log (`journalctl --user -u " + name + "`)"};
    }
    if (*state == UnitState::Failed) {
        std::string reason;
        if (auto unit = typedUnit(name, what);
            unit && !unit->path.empty() && unit->interface == "org.freedesktop.systemd1.Service") {
            if (auto result = getString(m_bus.get(), unit->path, unit->interface.c_str(), "Result", what);
                result) {
                reason = " (result: " + *result + ")";
            }
        }
        return Error{what + ": the unit failed to start" + reason + ended +
                     "; see `systemctl --user status " + name + "`"};
    }
    return {};
}

Result<libsystemd::BusMessagePtr>
SystemdUnitManager::propertiesCall(const std::string& name, const Properties& props, std::string_view what) {
    sd_bus_message* raw = nullptr;
    int r = sd_bus_message_new_method_call(m_bus.get(), &raw, kDestination, kManagerPath, kManagerInterface,
                                           "SetUnitProperties");
    libsystemd::BusMessagePtr call(raw);
    if (r < 0) {
        return libsystemd::busError(what, r);
    }
    // runtime = true: the change lives in /run and is gone with the unit; nicer re-applies it every period.
    r = sd_bus_message_append(call.get(), "sb", name.c_str(), 1);
    if (r < 0) {
        return libsystemd::busError(what, r);
    }
    if (auto appended = appendProperties(call.get(), props, what); !appended) {
        return appended.error();
    }
    return call;
}

Result<void> SystemdUnitManager::setUnitProperties(const std::string& name, const Properties& props) {
    drain();
    // This write comes after a queued one: the queued one must not write these properties afterwards.
    if (const auto found = m_writes.find(name); found != m_writes.end()) {
        auto& queued = found->second.queued;
        queued.erase(std::remove_if(queued.begin(), queued.end(),
                                    [&](const Property& q) {
                                        return std::any_of(
                                            props.begin(), props.end(),
                                            [&](const Property& p) { return p.name == q.name; });
                                    }),
                     queued.end());
    }
    const auto what = callName("SetUnitProperties", name);
    auto call = propertiesCall(name, props, what);
    if (!call) {
        return call.error();
    }
    libsystemd::BusError error;
    const int r = sd_bus_call(m_bus.get(), call->get(), 0, error.get(), nullptr);
    if (r < 0) {
        return libsystemd::busError(what, r, error);
    }
    return {};
}

void SystemdUnitManager::setUnitPropertiesAsync(const std::string& name, const Properties& props) {
    auto& writes = m_writes[name];
    if (!m_event) {
        // No loop to take the answer: written at once.
        writes.fail(namesOf(props), setUnitProperties(name, props));
        return;
    }
    drain();
    writes.owner = this;
    writes.unit = name;
    // The newest value of each property replaces the one a queued write held.
    for (const auto& property : props) {
        const auto same = std::find_if(writes.queued.begin(), writes.queued.end(),
                                       [&](const Property& q) { return q.name == property.name; });
        if (same != writes.queued.end()) {
            same->value = property.value;
        } else {
            writes.queued.push_back(property);
        }
    }
    if (!writes.inFlight) {
        sendQueued(writes);
    }
}

void SystemdUnitManager::sendQueued(UnitWrites& writes) {
    if (writes.queued.empty()) {
        return;
    }
    const Properties props = std::exchange(writes.queued, {});
    writes.inFlightOf = namesOf(props);
    const auto what = callName("SetUnitProperties", writes.unit);
    auto call = propertiesCall(writes.unit, props, what);
    if (!call) {
        writes.fail(writes.inFlightOf, call.error());
        return;
    }
    sd_bus_slot* raw = nullptr;
    const int r = sd_bus_call_async(m_bus.get(), &raw, call->get(), &SystemdUnitManager::onWriteAnswered,
                                    &writes, kWriteTimeoutUSec);
    writes.inFlight.reset(raw);
    if (r < 0) {
        writes.fail(writes.inFlightOf, libsystemd::busError(what, r));
    }
}

void SystemdUnitManager::UnitWrites::fail(const std::vector<std::string>& names,
                                          const Result<void>& failure) {
    for (const auto& name : names) {
        failures[name] = failure;
    }
}

int SystemdUnitManager::onWriteAnswered(sd_bus_message* reply, void* userdata, sd_bus_error*) noexcept {
    auto& writes = *static_cast<UnitWrites*>(userdata);
    try {
        // An error reply is systemd's refusal, or the one sd-bus makes up for a timeout or a closed bus.
        const sd_bus_error* error = sd_bus_message_get_error(reply);
        writes.fail(writes.inFlightOf, error
                                           ? libsystemd::busError(callName("SetUnitProperties", writes.unit),
                                                                  -sd_bus_message_get_errno(reply), error)
                                           : Result<void>{});
        writes.inFlight.reset(); // sd-bus holds the slot while this runs
        writes.owner->sendQueued(writes);
    } catch (...) {
        writes.fail(writes.inFlightOf, Error{"out of memory"});
    }
    return 0;
}

PropertyWrites SystemdUnitManager::takePropertyWrites(const std::string& name, const std::string& property) {
    const auto found = m_writes.find(name);
    if (found == m_writes.end()) {
        return {};
    }
    auto& writes = found->second;
    const auto named = [&](const std::string& n) { return n == property; };
    const bool pending = (writes.inFlight != nullptr &&
                          std::any_of(writes.inFlightOf.begin(), writes.inFlightOf.end(), named)) ||
                         std::any_of(writes.queued.begin(), writes.queued.end(),
                                     [&](const Property& q) { return named(q.name); });
    auto failure = writes.failures.find(property);
    return PropertyWrites{failure == writes.failures.end() ? Result<void>{}
                                                           : std::exchange(failure->second, Result<void>{}),
                          pending};
}

Result<void> SystemdUnitManager::stopUnit(const std::string& name, bool wait) {
    drain();
    const auto what = callName("StopUnit", name);
    auto jobs = watchJobs(wait, what);
    if (!jobs) {
        return jobs.error();
    }
    libsystemd::BusError error;
    sd_bus_message* raw = nullptr;
    int r = sd_bus_call_method(m_bus.get(), kDestination, kManagerPath, kManagerInterface, "StopUnit",
                               error.get(), &raw, "ss", name.c_str(), "replace");
    libsystemd::BusMessagePtr reply(raw);
    if (r < 0) {
        if (error.hasName(kNoSuchUnit)) {
            return {};
        }
        return libsystemd::busError(what, r, error);
    }
    const char* job = nullptr;
    r = sd_bus_message_read(reply.get(), "o", &job);
    if (r < 0) {
        return libsystemd::busError(what + ": reading the reply", r);
    }
    if (!wait) {
        return {};
    }
    // Whatever the job's result, the unit is stopped (systemd kills what does not stop in time), or a start
    // that someone else asked for replaced the stop: the caller's goal is met as far as nicer can tell.
    auto result = waitForJob(job, what);
    if (!result) {
        return result.error();
    }
    return {};
}

Result<void> SystemdUnitManager::callWithName(const char* method, const std::string& name,
                                              bool unknownIsDone) {
    drain();
    libsystemd::BusError error;
    const int r = sd_bus_call_method(m_bus.get(), kDestination, kManagerPath, kManagerInterface, method,
                                     error.get(), nullptr, "s", name.c_str());
    if (r < 0) {
        if (unknownIsDone && error.hasName(kNoSuchUnit)) {
            return {};
        }
        return libsystemd::busError(callName(method, name), r, error);
    }
    return {};
}

Result<void> SystemdUnitManager::freezeUnit(const std::string& name) {
    // On cgroup v1 / hybrid systemd answers "Unit '<name>' does not support freezing": the caller falls back.
    return callWithName("FreezeUnit", name, false);
}

Result<void> SystemdUnitManager::thawUnit(const std::string& name) {
    return callWithName("ThawUnit", name, false);
}

Result<void> SystemdUnitManager::killUnit(const std::string& name, int signal) {
    drain();
    libsystemd::BusError error;
    const int r = sd_bus_call_method(m_bus.get(), kDestination, kManagerPath, kManagerInterface, "KillUnit",
                                     error.get(), nullptr, "ssi", name.c_str(), "all", signal);
    if (r < 0) {
        return libsystemd::busError(callName("KillUnit", name), r, error);
    }
    return {};
}

Result<void> SystemdUnitManager::resetFailedUnit(const std::string& name) {
    return callWithName("ResetFailedUnit", name, true);
}

Result<UnitState> SystemdUnitManager::activeState(const std::string& name) {
    auto path = unitPath(name);
    if (!path) {
        return path.error();
    }
    if (path->empty()) {
        return UnitState::Inactive;
    }
    const auto what = callName("Get ActiveState", name);
    auto text = getString(m_bus.get(), *path, kUnitInterface, "ActiveState", what);
    if (!text) {
        return text.error();
    }
    if (const auto state = unitStateFromName(*text)) {
        return *state;
    }
    return Error{what + ": systemd reports the state \"" + *text + "\", which nicer does not know"};
}

Result<std::string> SystemdUnitManager::unitFile(const std::string& name) {
    drain();
    const auto what = callName("LoadUnit", name);
    libsystemd::BusError error;
    sd_bus_message* raw = nullptr;
    int r = sd_bus_call_method(m_bus.get(), kDestination, kManagerPath, kManagerInterface, "LoadUnit",
                               error.get(), &raw, "s", name.c_str());
    libsystemd::BusMessagePtr reply(raw);
    if (r < 0) {
        return libsystemd::busError(what, r, error);
    }
    const char* path = nullptr;
    r = sd_bus_message_read(reply.get(), "o", &path);
    if (r < 0) {
        return libsystemd::busError(what + ": reading the reply", r);
    }
    return getString(m_bus.get(), path, kUnitInterface, "FragmentPath", callName("Get FragmentPath", name));
}

Result<SystemdUnitManager::TypedUnit> SystemdUnitManager::typedUnit(const std::string& name,
                                                                    std::string_view what) {
    auto interface = typeInterface(name);
    if (!interface) {
        return Error{std::string(what) +
                     ": only services, slices, scopes, sockets, mounts and swaps have one"};
    }
    auto path = unitPath(name);
    if (!path) {
        return path.error();
    }
    return TypedUnit{std::move(*path), std::move(*interface)};
}

Result<std::string> SystemdUnitManager::controlGroup(const std::string& name) {
    const auto what = callName("Get ControlGroup", name);
    auto unit = typedUnit(name, what);
    if (!unit) {
        return unit.error();
    }
    if (unit->path.empty()) {
        return std::string();
    }
    return getString(m_bus.get(), unit->path, unit->interface.c_str(), "ControlGroup", what);
}

Result<std::uint64_t> SystemdUnitManager::cpuUsageNSec(const std::string& name) {
    const auto what = callName("Get CPUUsageNSec", name);
    auto unit = typedUnit(name, what);
    if (!unit) {
        return unit.error();
    }
    if (unit->path.empty()) {
        return kNoUsage;
    }
    return getTrivial<std::uint64_t>(m_bus.get(), unit->path, unit->interface.c_str(), "CPUUsageNSec",
                                     SD_BUS_TYPE_UINT64, what);
}

Result<std::uint32_t> SystemdUnitManager::mainPid(const std::string& name) {
    const auto what = callName("Get MainPID", name);
    if (typeInterface(name) != "org.freedesktop.systemd1.Service") {
        return Error{what + ": only services have a main PID"};
    }
    auto unit = typedUnit(name, what);
    if (!unit) {
        return unit.error();
    }
    if (unit->path.empty()) {
        return std::uint32_t{0};
    }
    return getTrivial<std::uint32_t>(m_bus.get(), unit->path, unit->interface.c_str(), "MainPID",
                                     SD_BUS_TYPE_UINT32, what);
}

} // namespace nicer::usermanager
