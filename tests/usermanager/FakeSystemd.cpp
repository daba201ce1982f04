#include "usermanager/FakeSystemd.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

namespace nicer::test {

namespace {

constexpr const char* kName = "org.freedesktop.systemd1";
constexpr const char* kManagerPath = "/org/freedesktop/systemd1";
constexpr const char* kManagerInterface = "org.freedesktop.systemd1.Manager";
constexpr const char* kUnitPrefix = "/org/freedesktop/systemd1/unit";

std::string unitPath(const std::string& unit) {
    char* path = nullptr;
    if (sd_bus_path_encode(kUnitPrefix, unit.c_str(), &path) < 0) {
        return {};
    }
    std::string out = path;
    std::free(path);
    return out;
}

/// Runs a handler's body; nothing thrown reaches sd-bus.
template <typename Body>
int guarded(Body&& body) noexcept {
    try {
        return body();
    } catch (...) {
        return -ENOMEM;
    }
}

/// StartTransientUnit's or StopUnit's handler: @p body(fake, unit), guarded.
template <typename Body>
int jobCall(sd_bus_message* call, void* userdata, Body&& body) {
    return guarded([&] {
        const char* unit = nullptr;
        const char* mode = nullptr;
        if (const int r = sd_bus_message_read(call, "ss", &unit, &mode); r < 0) {
            return r;
        }
        return body(*static_cast<FakeSystemd*>(userdata), std::string(unit));
    });
}

/// What SetUnitProperties' a(sv) sets: the names, and CPUQuotaPerSecUSec (0 when it sets none).
struct PropertiesSet {
    std::vector<std::string> names;
    std::uint64_t quota = 0;
};

PropertiesSet propertiesIn(sd_bus_message* call) {
    PropertiesSet set;
    if (sd_bus_message_enter_container(call, SD_BUS_TYPE_ARRAY, "(sv)") <= 0) {
        return set;
    }
    while (sd_bus_message_enter_container(call, SD_BUS_TYPE_STRUCT, "sv") > 0) {
        const char* name = nullptr;
        const char* contents = nullptr;
        if (sd_bus_message_read(call, "s", &name) < 0 ||
            sd_bus_message_peek_type(call, nullptr, &contents) < 0) {
            return set;
        }
        set.names.emplace_back(name);
        if (std::string_view(name) == "CPUQuotaPerSecUSec" && std::string_view(contents) == "t") {
            sd_bus_message_read(call, "v", "t", &set.quota);
        } else {
            sd_bus_message_skip(call, "v");
        }
        sd_bus_message_exit_container(call);
    }
    return set;
}

} // namespace

FakeSystemd::FakeSystemd(libsystemd::BusPtr bus)
    : m_bus(std::move(bus)) {
    // Here, where the private handlers can be named.
    static const sd_bus_vtable manager[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("GetUnit", "s", "o", &FakeSystemd::getUnit, 0),
        SD_BUS_METHOD("StartTransientUnit", "ssa(sv)a(sa(sv))", "o", &FakeSystemd::startTransientUnit, 0),
        SD_BUS_METHOD("StopUnit", "ss", "o", &FakeSystemd::stopUnit, 0),
        SD_BUS_METHOD("SetUnitProperties", "sba(sv)", "", &FakeSystemd::setUnitProperties, 0),
        SD_BUS_METHOD("Subscribe", "", "", &FakeSystemd::subscribe, 0),
        SD_BUS_SIGNAL("JobRemoved", "uoss", 0),
        SD_BUS_VTABLE_END,
    };
    static const sd_bus_vtable unit[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("ActiveState", "s", &FakeSystemd::unitProperty, 0, 0),
        SD_BUS_VTABLE_END,
    };
    static const sd_bus_vtable slice[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("ControlGroup", "s", &FakeSystemd::unitProperty, 0, 0),
        SD_BUS_VTABLE_END,
    };
    sd_bus_slot* slot = nullptr;
    REQUIRE(sd_bus_add_object_vtable(m_bus.get(), &slot, kManagerPath, kManagerInterface, manager, this) >=
            0);
    m_manager.reset(slot);
    REQUIRE(sd_bus_add_fallback_vtable(m_bus.get(), &slot, kUnitPrefix, "org.freedesktop.systemd1.Unit", unit,
                                       nullptr, this) >= 0);
    m_units.reset(slot);
    REQUIRE(sd_bus_add_fallback_vtable(m_bus.get(), &slot, kUnitPrefix, "org.freedesktop.systemd1.Slice",
                                       slice, nullptr, this) >= 0);
    m_slices.reset(slot);
    REQUIRE(sd_bus_request_name(m_bus.get(), kName, 0) >= 0);
    m_thread = std::thread([this] { serve(); });
}

FakeSystemd::~FakeSystemd() {
    m_stop = true;
    m_thread.join();
}

void FakeSystemd::serve() {
    while (!m_stop) {
        while (sd_bus_process(m_bus.get(), nullptr) > 0) {
        }
        const auto now = std::chrono::steady_clock::now();
        // Each action may add others (a job's end): taken out before they run.
        std::vector<Delayed> due;
        const auto split = std::stable_partition(m_delayed.begin(), m_delayed.end(),
                                                 [&](const Delayed& d) { return d.due > now; });
        std::move(split, m_delayed.end(), std::back_inserter(due));
        m_delayed.erase(split, m_delayed.end());
        for (auto& d : due) {
            d.action();
        }
        sd_bus_wait(m_bus.get(), 5'000);
    }
}

void FakeSystemd::later(std::chrono::milliseconds delay, std::function<void()> action) {
    if (delay.count() == 0) {
        action();
        return;
    }
    m_delayed.push_back({std::chrono::steady_clock::now() + delay, std::move(action)});
}

void FakeSystemd::setWriteDelay(std::chrono::milliseconds delay) {
    std::lock_guard lock(m_mutex);
    m_writeDelay = delay;
}

void FakeSystemd::setRefused(std::string property) {
    std::lock_guard lock(m_mutex);
    m_refused = std::move(property);
}

void FakeSystemd::setJobDelay(std::chrono::milliseconds delay) {
    std::lock_guard lock(m_mutex);
    m_jobDelay = delay;
}

void FakeSystemd::setJobResult(std::string result) {
    std::lock_guard lock(m_mutex);
    m_jobResult = std::move(result);
}

void FakeSystemd::setJobEndsBeforeReply(bool before) {
    std::lock_guard lock(m_mutex);
    m_jobEndsBeforeReply = before;
}

std::vector<std::uint64_t> FakeSystemd::quotasReceived() const {
    std::lock_guard lock(m_mutex);
    return m_quotas;
}

std::uint64_t FakeSystemd::quotaInForce() const {
    std::lock_guard lock(m_mutex);
    return m_quotaInForce;
}

int FakeSystemd::subscriptions() const {
    std::lock_guard lock(m_mutex);
    return m_subscriptions;
}

std::string FakeSystemd::activeState(const std::string& unit) const {
    std::lock_guard lock(m_mutex);
    const auto found = m_activeStates.find(unit);
    return found == m_activeStates.end() ? "inactive" : found->second;
}

int FakeSystemd::getUnit(sd_bus_message* call, void* userdata, sd_bus_error*) {
    auto& self = *static_cast<FakeSystemd*>(userdata);
    return guarded([&] {
        const char* unit = nullptr;
        if (const int r = sd_bus_message_read(call, "s", &unit); r < 0) {
            return r;
        }
        {
            std::lock_guard lock(self.m_mutex);
            if (self.m_activeStates.count(unit) == 0) {
                return sd_bus_reply_method_errorf(call, "org.freedesktop.systemd1.NoSuchUnit",
                                                  "Unit %s not loaded.", unit);
            }
        }
        return sd_bus_reply_method_return(call, "o", unitPath(unit).c_str());
    });
}

int FakeSystemd::runJob(sd_bus_message* call, const std::string& unit,
                        std::function<void(const std::string&)> end) {
    std::chrono::milliseconds delay{0};
    std::string result;
    bool beforeReply = false;
    {
        std::lock_guard lock(m_mutex);
        delay = m_jobDelay;
        result = m_jobResult;
        beforeReply = m_jobEndsBeforeReply;
    }
    const std::uint32_t id = ++m_lastJob;
    const std::string job = std::string(kManagerPath) + "/job/" + std::to_string(id);
    auto finish = [this, id, job, unit, result, end = std::move(end)] {
        end(result);
        sd_bus_emit_signal(m_bus.get(), kManagerPath, kManagerInterface, "JobRemoved", "uoss", id,
                           job.c_str(), unit.c_str(), result.c_str());
    };
    if (beforeReply && delay.count() == 0) {
        finish();
        return sd_bus_reply_method_return(call, "o", job.c_str());
    }
    const int r = sd_bus_reply_method_return(call, "o", job.c_str());
    later(delay, std::move(finish));
    return r;
}

int FakeSystemd::startTransientUnit(sd_bus_message* call, void* userdata, sd_bus_error*) {
    return jobCall(call, userdata, [&](FakeSystemd& self, const std::string& name) {
        {
            std::lock_guard lock(self.m_mutex);
            self.m_activeStates[name] = "activating";
        }
        return self.runJob(call, name, [&self, name](const std::string& result) {
            std::lock_guard lock(self.m_mutex);
            self.m_activeStates[name] = result == "done" ? "active" : "failed";
        });
    });
}

int FakeSystemd::stopUnit(sd_bus_message* call, void* userdata, sd_bus_error*) {
    return jobCall(call, userdata, [&](FakeSystemd& self, const std::string& name) {
        {
            std::lock_guard lock(self.m_mutex);
            const auto found = self.m_activeStates.find(name);
            if (found == self.m_activeStates.end()) {
                return sd_bus_reply_method_errorf(call, "org.freedesktop.systemd1.NoSuchUnit",
                                                  "Unit %s not loaded.", name.c_str());
            }
            found->second = "deactivating";
        }
        return self.runJob(call, name, [&self, name](const std::string&) {
            std::lock_guard lock(self.m_mutex);
            self.m_activeStates.erase(name);
        });
    });
}

int FakeSystemd::setUnitProperties(sd_bus_message* call, void* userdata, sd_bus_error*) {
    auto& self = *static_cast<FakeSystemd*>(userdata);
    return guarded([&] {
        const char* unit = nullptr;
        int runtime = 0;
        if (const int r = sd_bus_message_read(call, "sb", &unit, &runtime); r < 0) {
            return r;
        }
        const auto set = propertiesIn(call);
        const std::uint64_t quota = set.quota;
        std::chrono::milliseconds delay{0};
        std::string refused;
        {
            std::lock_guard lock(self.m_mutex);
            if (quota != 0) {
                self.m_quotas.push_back(quota);
            }
            delay = self.m_writeDelay;
            if (std::find(set.names.begin(), set.names.end(), self.m_refused) != set.names.end()) {
                refused = self.m_refused;
            }
        }
        // The answer, later: the call is kept until then. systemd refuses the whole call for one property.
        sd_bus_message_ref(call);
        self.later(delay, [&self, call, quota, refused] {
            libsystemd::BusMessagePtr held(call);
            if (!refused.empty()) {
                sd_bus_reply_method_errorf(held.get(), SD_BUS_ERROR_INVALID_ARGS, "Cannot set property %s",
                                           refused.c_str());
                return;
            }
            if (quota != 0) {
                std::lock_guard lock(self.m_mutex);
                self.m_quotaInForce = quota;
            }
            sd_bus_reply_method_return(held.get(), "");
        });
        return 1;
    });
}

int FakeSystemd::subscribe(sd_bus_message* call, void* userdata, sd_bus_error*) {
    auto& self = *static_cast<FakeSystemd*>(userdata);
    {
        std::lock_guard lock(self.m_mutex);
        ++self.m_subscriptions;
    }
    return sd_bus_reply_method_return(call, "");
}

int FakeSystemd::unitProperty(sd_bus*, const char* path, const char*, const char* property,
                              sd_bus_message* reply, void* userdata, sd_bus_error* error) {
    auto& self = *static_cast<FakeSystemd*>(userdata);
    return guarded([&] {
        char* decoded = nullptr;
        if (sd_bus_path_decode(path, kUnitPrefix, &decoded) <= 0) {
            return sd_bus_error_set(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "No such unit.");
        }
        const std::string unit = decoded;
        std::free(decoded);
        std::string state;
        {
            std::lock_guard lock(self.m_mutex);
            const auto found = self.m_activeStates.find(unit);
            if (found == self.m_activeStates.end()) {
                return sd_bus_error_set(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "No such unit.");
            }
            state = found->second;
        }
        const std::string value = std::string_view(property) == "ActiveState" ? state : "/" + unit;
        return sd_bus_message_append(reply, "s", value.c_str());
    });
}

} // namespace nicer::test
