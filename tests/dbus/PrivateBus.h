#pragma once
// A private session bus for one test: a real dbus-daemon, nobody else on it (tests/dbus, the tray's tests,
// and the tests of the watchers that need a bus of their own: the BOINC service probe, a slow user manager).

#include "PrivateBusConfig.h"
#include "ScopedEnv.h"
#include "libsystemd/Bus.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace nicer::dbus::test {

/// `dbus-daemon --print-address --nofork` for one test, with a session bus's configuration but no service
/// files (so no call can start an installed nicerd on it); DBUS_SESSION_BUS_ADDRESS points at it while it
/// lives, so that DaemonClient::connect() (sd_bus_open_user) finds it.
class PrivateBus {
public:
    PrivateBus() {
        char dir[] = "/tmp/nicer-dbus-test-XXXXXX";
        REQUIRE(::mkdtemp(dir) != nullptr);
        m_dir = dir;
        const std::string config = m_dir + "/bus.conf";
        {
            std::ofstream out(config);
            out << nicer::test::privateBusConfig(m_dir);
            REQUIRE(out.good());
        }
        const std::string configOption = "--config-file=" + config;
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        m_pid = ::fork();
        REQUIRE(m_pid >= 0);
        if (m_pid == 0) {
            ::dup2(fds[1], STDOUT_FILENO);
            ::close(fds[0]);
            ::close(fds[1]);
            ::execlp("dbus-daemon", "dbus-daemon", configOption.c_str(), "--print-address", "--nofork",
                     nullptr);
            ::_exit(127);
        }
        ::close(fds[1]);
        std::string line;
        char c = 0;
        // The address comes as one line once the bus listens; a dbus-daemon that is missing closes the pipe.
        while (::read(fds[0], &c, 1) == 1 && c != '\n') {
            line += c;
        }
        ::close(fds[0]);
        INFO("dbus-daemon did not start: install the dbus-daemon package (packaging/dev.sh does)");
        REQUIRE_FALSE(line.empty());
        m_address = line;
        m_env.emplace("DBUS_SESSION_BUS_ADDRESS", m_address);
    }
    ~PrivateBus() {
        m_env.reset();
        ::kill(m_pid, SIGTERM);
        ::waitpid(m_pid, nullptr, 0);
        std::error_code ignored;
        std::filesystem::remove_all(m_dir, ignored);
    }
    PrivateBus(const PrivateBus&) = delete;
    PrivateBus& operator=(const PrivateBus&) = delete;

    const std::string& address() const { return m_address; }

    /// A new client connection to the bus.
    libsystemd::BusPtr connect() const { return connectTo(m_address); }

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
    std::string m_dir;
    pid_t m_pid = -1;
    std::string m_address;
    std::optional<nicer::test::ScopedEnv> m_env; ///< DBUS_SESSION_BUS_ADDRESS, while the bus lives
};

} // namespace nicer::dbus::test
