#pragma once

// A faithful double of logind's part that nicer reads (org.freedesktop.login1, as systemd 252 has it) on a
// test's system bus: the Manager's GetUser, a User's Display (its graphical session, "" and "/" when it has
// none), and that Session's IdleHint and LockedHint with their SetIdleHint and SetLockedHint, which announce
// the change (PropertiesChanged with the value) as logind does.

#include "libsystemd/BusObject.h"
#include "libsystemd/Connection.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>

namespace nicer::test {

class FakeLogind {
public:
    static constexpr const char* kSessionPath = "/org/freedesktop/login1/session/_33";

    /// logind on @p address for the user @p uid, whose display session is "3" unless @p graphical is false.
    FakeLogind(sd_event* event, const std::string& address, uid_t uid, bool graphical = true)
        : m_connection(event, libsystemd::BusTarget::at(address))
        , m_uid(uid)
        , m_userPath("/org/freedesktop/login1/user/_" + std::to_string(uid))
        , m_graphical(graphical) {
        REQUIRE(m_connection.connect());
        sd_bus* bus = m_connection.bus();
        libsystemd::BusInterface manager;
        manager.methods.push_back({"GetUser", "u", "o", [this](sd_bus_message* call, sd_bus_error* error) {
                                       std::uint32_t asked = 0;
                                       sd_bus_message_read(call, "u", &asked);
                                       if (asked != m_uid) {
                                           return sd_bus_error_set(error, "org.freedesktop.login1.NoSuchUser",
                                                                   "User ID is not logged in.");
                                       }
                                       return sd_bus_reply_method_return(call, "o", m_userPath.c_str());
                                   }});
        publish(bus, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", std::move(manager),
                m_manager);
        libsystemd::BusInterface user;
        user.properties.push_back({"Display", "(so)", libsystemd::PropertyChanges::Read,
                                   [this](sd_bus_message* reply, sd_bus_error*) {
                                       return m_graphical
                                                  ? sd_bus_message_append(reply, "(so)", "3", kSessionPath)
                                                  : sd_bus_message_append(reply, "(so)", "", "/");
                                   }});
        publish(bus, m_userPath, "org.freedesktop.login1.User", std::move(user), m_user);
        libsystemd::BusInterface session;
        session.properties.push_back(
            {"Id", "s", libsystemd::PropertyChanges::Constant,
             [](sd_bus_message* reply, sd_bus_error*) { return sd_bus_message_append(reply, "s", "3"); }});
        session.properties.push_back(hint("IdleHint", m_idle));
        session.properties.push_back(hint("LockedHint", m_locked));
        session.methods.push_back(setter("SetIdleHint", "IdleHint", m_idle));
        session.methods.push_back(setter("SetLockedHint", "LockedHint", m_locked));
        publish(bus, kSessionPath, "org.freedesktop.login1.Session", std::move(session), m_session);
        REQUIRE(sd_bus_request_name(bus, "org.freedesktop.login1", 0) >= 0);
    }

    /// As the session's owner calls them (loginctl lock-session, a desktop's idle tracking).
    void setIdleHint(bool idle) { set("IdleHint", m_idle, idle); }
    void setLockedHint(bool locked) { set("LockedHint", m_locked, locked); }

private:
    static void publish(sd_bus* bus, const std::string& path, const char* interface,
                        libsystemd::BusInterface members, std::unique_ptr<libsystemd::BusObject>& into) {
        auto object = libsystemd::BusObject::publish(bus, path, interface, std::move(members));
        REQUIRE(object);
        into = std::move(*object);
    }

    static libsystemd::BusProperty hint(const char* name, const bool& value) {
        return {name, "b", libsystemd::PropertyChanges::Announced,
                [&value](sd_bus_message* reply, sd_bus_error*) {
                    return sd_bus_message_append(reply, "b", static_cast<int>(value));
                }};
    }

    libsystemd::BusMethod setter(const char* method, const char* property, bool& value) {
        return {method, "b", "", [this, property, &value](sd_bus_message* call, sd_bus_error*) {
                    int b = 0;
                    sd_bus_message_read(call, "b", &b);
                    set(property, value, b != 0);
                    return sd_bus_reply_method_return(call, "");
                }};
    }

    void set(const char* property, bool& value, bool now) {
        value = now;
        REQUIRE(sd_bus_emit_properties_changed(m_connection.bus(), kSessionPath,
                                               "org.freedesktop.login1.Session", property, nullptr) >= 0);
    }

    libsystemd::Connection m_connection;
    uid_t m_uid;
    std::string m_userPath;
    bool m_graphical;
    bool m_idle = false;
    bool m_locked = false;
    std::unique_ptr<libsystemd::BusObject> m_manager;
    std::unique_ptr<libsystemd::BusObject> m_user;
    std::unique_ptr<libsystemd::BusObject> m_session;
};

} // namespace nicer::test
