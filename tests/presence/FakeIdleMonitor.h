#pragma once

// A faithful double of GNOME Shell's idle monitor (Mutter's org.gnome.Mutter.IdleMonitor, from its
// introspection XML) on a test's bus: GetIdletime, AddIdleWatch (fires each time the idle time reaches its
// interval), AddUserActiveWatch (fires once, at the next input), RemoveWatch, and WatchFired. The test gives
// the input (input()); the idle time runs on the steady clock.

#include "libsystemd/BusObject.h"
#include "libsystemd/Connection.h"
#include "libsystemd/Timer.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nicer::test {

class FakeIdleMonitor {
public:
    /// Publishes the monitor on its own connection to @p address, driven by @p event, and takes its name.
    FakeIdleMonitor(sd_event* event, const std::string& address)
        : m_connection(event, libsystemd::BusTarget::at(address)) {
        REQUIRE(m_connection.connect());
        libsystemd::BusInterface members;
        members.methods.push_back({"GetIdletime", "", "t", [this](sd_bus_message* call, sd_bus_error*) {
                                       const auto ms = static_cast<std::uint64_t>(idleTime().count());
                                       return sd_bus_reply_method_return(call, "t", ms);
                                   }});
        members.methods.push_back({"AddIdleWatch", "t", "u", [this](sd_bus_message* call, sd_bus_error*) {
                                       std::uint64_t interval = 0;
                                       sd_bus_message_read(call, "t", &interval);
                                       intervals.push_back(std::chrono::milliseconds(interval));
                                       const std::uint32_t id = ++m_lastId;
                                       m_watches[id] = {false, std::chrono::milliseconds(interval), false};
                                       return sd_bus_reply_method_return(call, "u", id);
                                   }});
        members.methods.push_back(
            {"AddUserActiveWatch", "", "u", [this](sd_bus_message* call, sd_bus_error*) {
                 const std::uint32_t id = ++m_lastId;
                 m_watches[id] = {true, {}, false};
                 return sd_bus_reply_method_return(call, "u", id);
             }});
        members.methods.push_back({"RemoveWatch", "u", "", [this](sd_bus_message* call, sd_bus_error*) {
                                       std::uint32_t id = 0;
                                       sd_bus_message_read(call, "u", &id);
                                       m_watches.erase(id);
                                       return sd_bus_reply_method_return(call, "");
                                   }});
        members.busSignals.push_back({"WatchFired", "u"});
        auto object =
            libsystemd::BusObject::publish(m_connection.bus(), kPath, kInterface, std::move(members));
        REQUIRE(object);
        m_object = std::move(*object);
        REQUIRE(sd_bus_request_name(m_connection.bus(), kInterface, 0) >= 0);
        auto timer = libsystemd::Timer::create(event, [this] { tick(); });
        REQUIRE(timer);
        m_timer = std::move(*timer);
        m_timer.armIn(std::chrono::milliseconds(20));
    }

    /// Keyboard or mouse input now: the idle time starts again, user-active watches fire.
    void input() {
        m_lastInput = std::chrono::steady_clock::now();
        for (auto it = m_watches.begin(); it != m_watches.end();) {
            if (it->second.active) {
                fire(it->first);
                it = m_watches.erase(it);
            } else {
                it->second.fired = false;
                ++it;
            }
        }
    }

    std::chrono::milliseconds idleTime() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                     m_lastInput);
    }
    std::size_t watchCount() const { return m_watches.size(); }

    /// The intervals AddIdleWatch was called with, in order.
    std::vector<std::chrono::milliseconds> intervals;

private:
    static constexpr const char* kPath = "/org/gnome/Mutter/IdleMonitor/Core";
    static constexpr const char* kInterface = "org.gnome.Mutter.IdleMonitor";

    struct Watch {
        bool active; ///< a user-active watch; else an idle watch of interval
        std::chrono::milliseconds interval;
        bool fired; ///< an idle watch that fired since the last input
    };

    void tick() {
        for (auto& [id, watch] : m_watches) {
            if (!watch.active && !watch.fired && idleTime() >= watch.interval) {
                watch.fired = true;
                fire(id);
            }
        }
        m_timer.armIn(std::chrono::milliseconds(20));
    }

    void fire(std::uint32_t id) {
        REQUIRE(sd_bus_emit_signal(m_connection.bus(), kPath, kInterface, "WatchFired", "u", id) >= 0);
    }

    libsystemd::Connection m_connection;
    std::unique_ptr<libsystemd::BusObject> m_object;
    libsystemd::Timer m_timer;
    std::map<std::uint32_t, Watch> m_watches;
    std::uint32_t m_lastId = 0;
    std::chrono::steady_clock::time_point m_lastInput = std::chrono::steady_clock::now();
};

} // namespace nicer::test
