#pragma once

#include "daemon/UserManagerBoundary.h"
#include "fakes/FakeActuator.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

// A machine for daemon::ControlLoop to sample: its /proc/stat, and the user manager it reads at the boundary.

namespace nicer::test {

/// A /proc/stat stand-in that the test rewrites between ticks.
class StatFile {
public:
    StatFile() {
        static int counter = 0;
        m_path = std::filesystem::temp_directory_path() /
                 ("nicer-loop-procstat-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    }
    ~StatFile() {
        std::error_code ec;
        std::filesystem::remove(m_path, ec);
    }
    StatFile(const StatFile&) = delete;
    StatFile& operator=(const StatFile&) = delete;

    void copyFixture(const std::string& name) const {
        std::filesystem::copy_file(std::string(NICER_TEST_DATA) + "/procstat/" + name, m_path,
                                   std::filesystem::copy_options::overwrite_existing);
    }
    void write(const std::string& text) const { std::ofstream(m_path, std::ios::trunc) << text; }
    void remove() const { std::filesystem::remove(m_path); }
    std::string path() const { return m_path.string(); }

private:
    std::filesystem::path m_path;
};

/// A two-CPU machine whose counters advance by 100 ticks per CPU each period.
class TwoCpuMachine {
public:
    explicit TwoCpuMachine(const StatFile& file)
        : m_file(file) {
        write();
    }
    /// One period in which each CPU was idle for @p idleTicks of its 100 ticks.
    void advance(std::uint64_t idleTicks) {
        m_idle += idleTicks;
        m_user += 100 - idleTicks;
        write();
    }

private:
    void write() const {
        const auto line = [&](const std::string& label, std::uint64_t factor) {
            return label + " " + std::to_string(factor * m_user) + " 0 0 " + std::to_string(factor * m_idle) +
                   " 0 0 0 0 0 0\n";
        };
        m_file.write(line("cpu ", 2) + line("cpu0", 1) + line("cpu1", 1));
    }

    const StatFile& m_file;
    std::uint64_t m_user = 1000;
    std::uint64_t m_idle = 5000;
};

inline double nsPerTick() {
    return 1e9 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

/// A user manager whose CPU time and whose work's cpu.idle the test sets between ticks.
class FakeBoundary final : public daemon::UserManagerBoundary {
public:
    Result<std::uint64_t> managerCpuNSec() override {
        if (!managerReadable) {
            return Error{"cpu.stat: no such file"};
        }
        return managerNSec;
    }
    Result<bool> workYieldsToSiblings() override { return cpuIdle; }
    Result<bool> workYieldsToEverything() override { return rootIdle; }

    std::uint64_t managerNSec = 7'000'000'000;
    bool managerReadable = true;
    bool cpuIdle = true;
    bool rootIdle = false; ///< the work in the root idle slice
};

/// One period of a two-CPU machine: shares of the machine used by the work, by its siblings in the user
/// manager and from outside it; the rest is idle.
struct MachinePeriod {
    double work, inside, outside;
};

/// Drives the machine, the work's counter and the user manager's counter through one period.
inline void advancePeriod(TwoCpuMachine& machine, FakeActuator& actuator, FakeBoundary& boundary,
                          const MachinePeriod& p) {
    const double machineNSec = 200 * nsPerTick();
    const auto idleTicks =
        static_cast<std::uint64_t>(std::llround(100.0 * (1.0 - p.work - p.inside - p.outside)));
    machine.advance(idleTicks);
    actuator.addWorkCpuNSec(static_cast<std::uint64_t>(std::llround(p.work * machineNSec)));
    boundary.managerNSec += static_cast<std::uint64_t>(std::llround((p.work + p.inside) * machineNSec));
}

} // namespace nicer::test
