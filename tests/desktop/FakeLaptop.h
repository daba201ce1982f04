#pragma once

// A laptop's power for tests, from real components: a private bus configured as a system bus (a real
// dbus-daemon nobody else is on), and tests/harness/fake-battery.py, which runs the real upowerd (and, if
// asked, the real power-profiles-daemon) on it over umockdev's emulated mains and battery, driven by
// commands.

#include "Child.h"
#include "PrivateBusConfig.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace nicer::test {

/// `dbus-daemon --config-file` with a system bus's privateBusConfig(), for one test; stop() ends it early (a
/// system bus that goes away).
class PrivateSystemBus {
public:
    PrivateSystemBus() {
        char dir[] = "/tmp/nicer-system-bus-XXXXXX";
        REQUIRE(::mkdtemp(dir) != nullptr);
        m_dir = dir;
        {
            std::ofstream out(m_dir / "bus.conf");
            out << privateBusConfig(m_dir.string(), {}, "system");
            REQUIRE(out.good());
        }
        // Its log apart: as root, a system bus warns that it cannot raise its file limit.
        m_daemon.start({"/usr/bin/dbus-daemon", "--config-file=" + (m_dir / "bus.conf").string(),
                        "--print-address", "--nofork"},
                       m_dir / "dbus-daemon.log");
        m_address = readLine(m_daemon.out());
        INFO("dbus-daemon did not start: install the dbus-daemon package (packaging/dev.sh does)");
        REQUIRE_FALSE(m_address.empty());
    }
    ~PrivateSystemBus() {
        stop();
        std::error_code ignored;
        std::filesystem::remove_all(m_dir, ignored);
    }
    PrivateSystemBus(const PrivateSystemBus&) = delete;
    PrivateSystemBus& operator=(const PrivateSystemBus&) = delete;

    const std::string& address() const { return m_address; }
    void stop() { m_daemon.stop(std::chrono::milliseconds(0)); }

private:
    std::filesystem::path m_dir;
    Child m_daemon;
    std::string m_address;
};

/// tests/harness/fake-battery.py on a bus: AC online and BAT0 charging at 80 % at the start. missing() names
/// the package to install when a prerequisite is not there (the test then skips).
class FakeLaptop {
public:
    /// Which power-profiles-daemon runs beside upowerd: none, the real one (Debian 12's, under
    /// net.hadess.PowerProfiles), or the harness's stand-in under the later name alone.
    enum class Profiles { None, Real, LaterName };

    /// @p check: only the prerequisites are checked (missing() says), nothing is started.
    explicit FakeLaptop(const std::string& busAddress, Profiles profiles = Profiles::None,
                        bool check = false) {
        const std::string harness = std::string(NICER_TEST_DATA) + "/../harness/fake-battery.py";
        std::vector<std::string> argv{"/usr/bin/python3", harness, "--bus", busAddress};
        if (profiles == Profiles::Real) {
            argv.emplace_back("--profiles");
        } else if (profiles == Profiles::LaterName) {
            argv.emplace_back("--profiles-later-name");
        }
        if (check) {
            argv.emplace_back("--check");
        }
        if (::access(argv[0].c_str(), X_OK) != 0) {
            m_missing = "python3 (with python3-gi, gir1.2-umockdev-1.0)";
            return;
        }
        m_harness.start(argv);
        const std::string first = readLine(m_harness.out());
        if (first.starts_with("missing ")) {
            m_missing = first.substr(8);
            return;
        }
        INFO("fake-battery.py said: " << first);
        REQUIRE(first.starts_with("ready"));
        m_root = check ? "" : first.substr(6);
    }
    ~FakeLaptop() {
        if (m_harness.in() >= 0) {
            const std::string quit = "quit\n";
            (void)!::write(m_harness.in(), quit.data(), quit.size());
        }
    }
    FakeLaptop(const FakeLaptop&) = delete;
    FakeLaptop& operator=(const FakeLaptop&) = delete;

    /// The package (and why) to install where the harness could not run; empty when it runs.
    const std::string& missing() const { return m_missing; }
    /// The emulated /sys/class/power_supply, in the state upowerd sees.
    std::filesystem::path powerSupplyDir() const { return m_root / "sys/class/power_supply"; }
    /// One of the harness's commands (unplug, plug, charge N, stop-upower, start-upower, profile NAME), done.
    void command(const std::string& line) {
        const std::string text = line + "\n";
        REQUIRE(::write(m_harness.in(), text.data(), text.size()) == static_cast<ssize_t>(text.size()));
        const std::string answer = readLine(m_harness.out());
        INFO("fake-battery.py, to \"" << line << "\": " << answer);
        REQUIRE(answer == "ok");
    }

private:
    Child m_harness;
    std::filesystem::path m_root;
    std::string m_missing;
};

} // namespace nicer::test
