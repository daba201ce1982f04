#pragma once

// A faithful double of logind's part that nicer reads (org.freedesktop.login1, as systemd 252 has it) on a
// test's system bus: the Manager's GetUser and its SessionNew signal, a User's Display (its display session,
// "" and "/" when it has none), and each Session's IdleHint and LockedHint with their SetIdleHint and
// SetLockedHint, which announce the change (PropertiesChanged with the value) as logind does; and the
// Manager's Inhibit, which answers with the write end of a pipe whose closing releases the inhibitor.

#include "libsystemd/BusObject.h"
#include "libsystemd/Connection.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <fcntl.h>
#include <memory>
#include <poll.h>
#include <string>
#include <sys/types.h>
#include <unistd.h>
#include <vector>

namespace nicer::test {

class FakeLogind {
public:
    /// logind on @p address for the user @p uid, whose display session is "3" unless @p graphical is false.
    FakeLogind(sd_event* event, const std::string& address, uid_t uid, bool graphical = true)
        : m_connection(event, libsystemd::BusTarget::at(address))
        , m_uid(uid)
        , m_userPath("/org/freedesktop/login1/user/_" + std::to_string(uid)) {
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
        manager.methods.push_back({"Inhibit", "ssss", "h", [this](sd_bus_message* call, sd_bus_error* error) {
                                       return inhibit(call, error);
                                   }});
        manager.busSignals.push_back({"SessionNew", "so"});
        m_manager =
            publish(bus, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", std::move(manager));
        libsystemd::BusInterface user;
        user.properties.push_back({"Display", "(so)", libsystemd::PropertyChanges::Read,
                                   [this](sd_bus_message* reply, sd_bus_error*) {
                                       return m_display ? sd_bus_message_append(reply, "(so)",
                                                                                m_display->id.c_str(),
                                                                                m_display->path.c_str())
                                                        : sd_bus_message_append(reply, "(so)", "", "/");
                                   }});
        m_user = publish(bus, m_userPath, "org.freedesktop.login1.User", std::move(user));
        if (graphical) {
            startDisplaySession("3");
        }
        REQUIRE(sd_bus_request_name(bus, "org.freedesktop.login1", 0) >= 0);
    }

    ~FakeLogind() {
        for (const auto& held : m_inhibitors) {
            ::close(held.readEnd);
        }
    }
    FakeLogind(const FakeLogind&) = delete;
    FakeLogind& operator=(const FakeLogind&) = delete;

    /// A new session @p id of the user becomes their display session (a display manager's login), announced
    /// with SessionNew as logind does.
    void startDisplaySession(const std::string& id) {
        auto session = std::make_unique<Session>();
        session->id = id;
        session->path = "/org/freedesktop/login1/session/_3" + id;
        Session* s = session.get();
        libsystemd::BusInterface members;
        members.properties.push_back(
            {"Id", "s", libsystemd::PropertyChanges::Constant, [s](sd_bus_message* reply, sd_bus_error*) {
                 return sd_bus_message_append(reply, "s", s->id.c_str());
             }});
        members.properties.push_back(hint("IdleHint", s->idle));
        members.properties.push_back(hint("LockedHint", s->locked));
        members.methods.push_back(setter(*s, "SetIdleHint", "IdleHint", s->idle));
        members.methods.push_back(setter(*s, "SetLockedHint", "LockedHint", s->locked));
        s->object =
            publish(m_connection.bus(), s->path, "org.freedesktop.login1.Session", std::move(members));
        m_display = s;
        m_sessions.push_back(std::move(session));
        REQUIRE(sd_bus_emit_signal(m_connection.bus(), "/org/freedesktop/login1",
                                   "org.freedesktop.login1.Manager", "SessionNew", "so", s->id.c_str(),
                                   s->path.c_str()) >= 0);
    }

    /// As the display session's owner calls them (loginctl lock-session, a desktop's idle tracking).
    void setIdleHint(bool idle) { set(*m_display, "IdleHint", m_display->idle, idle); }
    void setLockedHint(bool locked) { set(*m_display, "LockedHint", m_display->locked, locked); }
    /// The display session's IdleHint now, however it was set (by the test, or by a client's SetIdleHint).
    bool idleHint() const { return m_display->idle; }

    /// An inhibitor granted by Inhibit, as `systemd-inhibit --list` shows it.
    struct Inhibitor {
        std::string what, who, why, mode;
    };
    /// The inhibitors still held: those whose fd no holder has closed (logind's ListInhibitors).
    std::vector<Inhibitor> inhibitors() {
        std::vector<Inhibitor> held;
        for (auto it = m_inhibitors.begin(); it != m_inhibitors.end();) {
            pollfd p{it->readEnd, POLLIN, 0};
            if (::poll(&p, 1, 0) > 0 && (p.revents & POLLHUP) != 0) {
                ::close(it->readEnd);
                it = m_inhibitors.erase(it);
                continue;
            }
            held.push_back(it->info);
            ++it;
        }
        return held;
    }
    /// Inhibit answers AccessDenied from now on (@p refuse), as logind does where polkit says no.
    void refuseInhibit(bool refuse) { m_refuseInhibit = refuse; }

private:
    struct Held {
        Inhibitor info;
        int readEnd = -1;
    };

    int inhibit(sd_bus_message* call, sd_bus_error* error) {
        const char* what = nullptr;
        const char* who = nullptr;
        const char* why = nullptr;
        const char* mode = nullptr;
        if (sd_bus_message_read(call, "ssss", &what, &who, &why, &mode) < 0) {
            return sd_bus_error_set(error, "org.freedesktop.DBus.Error.InvalidArgs", "Invalid arguments");
        }
        if (m_refuseInhibit) {
            return sd_bus_error_set(error, "org.freedesktop.DBus.Error.AccessDenied",
                                    "Access denied to inhibit sleep");
        }
        int fds[2];
        REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
        m_inhibitors.push_back({{what, who, why, mode}, fds[0]});
        const int r = sd_bus_reply_method_return(call, "h", fds[1]); // the message sends a copy
        ::close(fds[1]);
        return r;
    }

    struct Session {
        std::string id;
        std::string path;
        bool idle = false;
        bool locked = false;
        std::unique_ptr<libsystemd::BusObject> object;
    };

    static std::unique_ptr<libsystemd::BusObject>
    publish(sd_bus* bus, const std::string& path, const char* interface, libsystemd::BusInterface members) {
        auto object = libsystemd::BusObject::publish(bus, path, interface, std::move(members));
        REQUIRE(object);
        return std::move(*object);
    }

    static libsystemd::BusProperty hint(const char* name, const bool& value) {
        return {name, "b", libsystemd::PropertyChanges::Announced,
                [&value](sd_bus_message* reply, sd_bus_error*) {
                    return sd_bus_message_append(reply, "b", static_cast<int>(value));
                }};
    }

    libsystemd::BusMethod setter(Session& session, const char* method, const char* property, bool& value) {
        return {method, "b", "", [this, &session, property, &value](sd_bus_message* call, sd_bus_error*) {
                    int b = 0;
                    sd_bus_message_read(call, "b", &b);
                    set(session, property, value, b != 0);
                    return sd_bus_reply_method_return(call, "");
                }};
    }

    void set(const Session& session, const char* property, bool& value, bool now) {
        value = now;
        REQUIRE(sd_bus_emit_properties_changed(m_connection.bus(), session.path.c_str(),
                                               "org.freedesktop.login1.Session", property, nullptr) >= 0);
    }

    libsystemd::Connection m_connection;
    uid_t m_uid;
    std::string m_userPath;
    std::vector<std::unique_ptr<Session>> m_sessions;
    Session* m_display = nullptr;
    std::vector<Held> m_inhibitors;
    bool m_refuseInhibit = false;
    std::unique_ptr<libsystemd::BusObject> m_manager;
    std::unique_ptr<libsystemd::BusObject> m_user;
};

} // namespace nicer::test
