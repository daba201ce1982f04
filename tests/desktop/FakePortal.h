#pragma once

// A faithful double of the desktop portal's Inhibit (org.freedesktop.portal.Inhibit, as
// xdg-desktop-portal 1.16 has it) on a test's session bus: Inhibit(window, flags, options) answers with a
// Request object whose Close ends the inhibition, and an inhibition also ends when its caller leaves the bus.

#include "libsystemd/BusObject.h"
#include "libsystemd/Connection.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nicer::test {

class FakePortal {
public:
    /// An inhibition in force: its flags (4: suspend) and the reason given in the options.
    struct Inhibition {
        std::uint32_t flags = 0;
        std::string reason;
    };

    FakePortal(sd_event* event, const std::string& address)
        : m_connection(event, libsystemd::BusTarget::at(address)) {
        REQUIRE(m_connection.connect());
        libsystemd::BusInterface inhibit;
        inhibit.methods.push_back(
            {"Inhibit", "sua{sv}", "o",
             [this](sd_bus_message* call, sd_bus_error* error) { return onInhibit(call, error); }});
        auto object = libsystemd::BusObject::publish(m_connection.bus(), "/org/freedesktop/portal/desktop",
                                                     "org.freedesktop.portal.Inhibit", std::move(inhibit));
        REQUIRE(object);
        m_object = std::move(*object);
        REQUIRE(sd_bus_request_name(m_connection.bus(), "org.freedesktop.portal.Desktop", 0) >= 0);
    }

    /// The inhibitions in force now: neither closed nor left by their caller.
    std::vector<Inhibition> inhibitions() {
        forgetClosed();
        std::vector<Inhibition> now;
        for (const auto& [path, held] : m_held) {
            if (sd_bus_track_count(held->caller) > 0) {
                now.push_back(held->inhibition);
            }
        }
        return now;
    }

private:
    struct Held {
        Inhibition inhibition;
        sd_bus_track* caller = nullptr;
        std::unique_ptr<libsystemd::BusObject> request;
        ~Held() { sd_bus_track_unref(caller); }
    };

    int onInhibit(sd_bus_message* call, sd_bus_error* error) {
        const char* window = nullptr;
        Inhibition inhibition;
        if (sd_bus_message_read(call, "su", &window, &inhibition.flags) < 0 ||
            sd_bus_message_enter_container(call, 'a', "{sv}") < 0) {
            return sd_bus_error_set(error, "org.freedesktop.DBus.Error.InvalidArgs", "Invalid arguments");
        }
        while (sd_bus_message_enter_container(call, 'e', "sv") > 0) {
            const char* key = nullptr;
            sd_bus_message_read(call, "s", &key);
            if (std::string(key) == "reason") {
                const char* reason = nullptr;
                sd_bus_message_read(call, "v", "s", &reason);
                inhibition.reason = reason;
            } else {
                sd_bus_message_skip(call, "v");
            }
            sd_bus_message_exit_container(call);
        }
        sd_bus_message_exit_container(call);
        const std::string path = "/org/freedesktop/portal/desktop/request/1_1/t" + std::to_string(++m_count);
        auto held = std::make_unique<Held>();
        held->inhibition = inhibition;
        REQUIRE(sd_bus_track_new(m_connection.bus(), &held->caller, nullptr, nullptr) >= 0);
        REQUIRE(sd_bus_track_add_sender(held->caller, call) >= 0);
        libsystemd::BusInterface request;
        request.methods.push_back({"Close", "", "", [this, path](sd_bus_message* close, sd_bus_error*) {
                                       m_closing.push_back(path);
                                       return sd_bus_reply_method_return(close, "");
                                   }});
        auto object = libsystemd::BusObject::publish(m_connection.bus(), path,
                                                     "org.freedesktop.portal.Request", std::move(request));
        REQUIRE(object);
        held->request = std::move(*object);
        m_held[path] = std::move(held);
        forgetClosed();
        return sd_bus_reply_method_return(call, "o", path.c_str());
    }

    /// Requests closed since: their objects go outside their own Close handler.
    void forgetClosed() {
        for (const auto& path : m_closing) {
            m_held.erase(path);
        }
        m_closing.clear();
    }

    libsystemd::Connection m_connection;
    std::unique_ptr<libsystemd::BusObject> m_object;
    std::map<std::string, std::unique_ptr<Held>> m_held;
    std::vector<std::string> m_closing;
    int m_count = 0;
};

} // namespace nicer::test
