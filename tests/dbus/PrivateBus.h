#pragma once
// A private session bus for one test: a real dbus-daemon, nobody else on it (tests/dbus, the tray's tests,
// and the tests of the watchers that need a bus of their own: the BOINC service probe, a slow user manager).

#include "ScopedEnv.h"
#include "libsystemd/Bus.h"
#include "libsystemd/RestartableBus.h"

#include <catch2/catch.hpp>

#include <string>

namespace nicer::dbus::test {

/// A RestartableBus for one test, with a session bus's configuration but no service files (so no call can
/// start an installed nicerd on it); DBUS_SESSION_BUS_ADDRESS points at it while it lives, so that
/// DaemonClient::connect() (sd_bus_open_user) finds it.
class PrivateBus {
public:
    PrivateBus() = default;
    PrivateBus(const PrivateBus&) = delete;
    PrivateBus& operator=(const PrivateBus&) = delete;

    const std::string& address() const { return m_bus.address(); }

    /// A new client connection to the bus.
    libsystemd::BusPtr connect() const { return connectTo(m_bus.address()); }

    /// A new client connection to the bus at @p address (one this class did not start, too).
    static libsystemd::BusPtr connectTo(const std::string& address) {
        sd_bus* bus = nullptr;
        REQUIRE(sd_bus_new(&bus) >= 0);
        libsystemd::BusPtr owned(bus);
        REQUIRE(sd_bus_set_address(bus, address.c_str()) >= 0);
        REQUIRE(sd_bus_set_bus_client(bus, 1) >= 0);
        REQUIRE(sd_bus_start(bus) >= 0);
        return owned;
    }

private:
    nicer::test::RestartableBus m_bus;
    /// DBUS_SESSION_BUS_ADDRESS, while the bus lives (declared after it: restored before the bus ends).
    nicer::test::ScopedEnv m_env{"DBUS_SESSION_BUS_ADDRESS", m_bus.address()};
};

} // namespace nicer::dbus::test
