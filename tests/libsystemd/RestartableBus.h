#pragma once

// A real dbus-daemon on a private bus at one fixed address, for a test of its own: the libsystemd layer's
// tests, and under tests/dbus/PrivateBus.h the D-Bus units', the tray's and the watchers'.

#include "Child.h"
#include "PrivateBusConfig.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace nicer::test {

/// A real dbus-daemon on a private bus at one fixed address, stopped and started again at will.
class RestartableBus {
public:
    RestartableBus() {
        char dir[] = "/tmp/nicer-bus-test-XXXXXX";
        REQUIRE(::mkdtemp(dir) != nullptr);
        m_dir = dir;
        m_address = "unix:path=" + (m_dir / "bus").string();
        {
            std::ofstream out(m_dir / "bus.conf");
            out << privateBusConfig(m_dir.string(), m_address);
            REQUIRE(out.good());
        }
        start();
    }
    ~RestartableBus() {
        stop();
        std::error_code ignored;
        std::filesystem::remove_all(m_dir, ignored);
    }
    RestartableBus(const RestartableBus&) = delete;
    RestartableBus& operator=(const RestartableBus&) = delete;

    const std::string& address() const { return m_address; }

    void start() {
        // Its log apart: as root, a bus warns that it cannot raise its file limit.
        m_daemon.start({"/usr/bin/dbus-daemon", "--config-file=" + (m_dir / "bus.conf").string(),
                        "--print-address", "--nofork"},
                       m_dir / "dbus-daemon.log");
        INFO("dbus-daemon did not start: install the dbus-daemon package (packaging/dev.sh does)");
        REQUIRE_THAT(readLine(m_daemon.out()), Catch::StartsWith(m_address + ","));
    }
    /// Ends the bus daemon: every connection to it closes; the next one listens on the same path.
    void stop() {
        m_daemon.stop(std::chrono::milliseconds(0));
        std::filesystem::remove(m_dir / "bus");
    }

private:
    std::filesystem::path m_dir;
    std::string m_address;
    Child m_daemon;
};

} // namespace nicer::test
