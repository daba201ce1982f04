#pragma once

// An emulated sensor (a CPU temperature, a fan) that follows the work's measured CPU time through a
// first-order model: the plant the temperature and fan rules meet, for the integration tests.

#include "CpuMeter.h"
#include "NicerSlice.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace nicer::test {

using namespace std::chrono_literals;

/// The work's CPU time so far, in clock ticks, from its processes in nicer's slice (the cgroup's members).
inline long long workTicks() {
    long long ticks = 0;
    for (const pid_t pid : slicePids()) {
        ticks += std::max(0LL, processCpuTicks(pid));
    }
    return ticks;
}

/// A first-order model of a sensor that follows the work: value' = (rest + gain x share - value) / tau.
struct SensorModel {
    std::string file; ///< its hwmon file: temp1_input, fan1_input
    double rest;      ///< the value with no work
    double gain;      ///< what the whole machine's work adds
    double scale;     ///< the file's unit per value's (1000: millidegrees)
    double tau = 4.0; ///< seconds
    /// The steady share of the machine that holds the model at @p target.
    double shareAt(double target) const { return (target - rest) / gain; }
};

inline const SensorModel kThermalModel{"temp1_input", 40.0, 60.0, 1000.0}; ///< °C
inline const SensorModel kFanModel{"fan1_input", 1000.0, 6000.0, 1.0};     ///< rpm: 100 rpm the rule's degree

/**
 * An emulated sensor, a CPU temperature or a fan: an hwmon directory whose input follows a SensorModel driven
 * by the work's measured CPU time, updated every 100 ms on a thread of its own and written atomically (a
 * rename), as the kernel's sensor is read whole.
 */
class ModelSensor {
public:
    ModelSensor(const std::filesystem::path& dir, SensorModel model)
        : m_dir(dir / "hwmon0")
        , m_model(std::move(model))
        , m_value(m_model.rest) {
        std::filesystem::create_directories(m_dir);
        std::ofstream(m_dir / "name") << "emulated\n";
        write(m_model.rest);
        m_thread = std::thread([this] { run(); });
    }
    ~ModelSensor() {
        m_stop = true;
        m_thread.join();
    }
    ModelSensor(const ModelSensor&) = delete;
    ModelSensor& operator=(const ModelSensor&) = delete;

    std::filesystem::path hwmonDir() const { return m_dir.parent_path(); }
    std::filesystem::path input() const { return m_dir / m_model.file; }
    double value() const { return m_value.load(); }
    const SensorModel& model() const { return m_model; }
    /// The work's share of the machine over the last 3 s.
    double share() const { return m_share.load(); }

private:
    void write(double value) {
        const auto tmp = m_dir / (m_model.file + ".new");
        std::ofstream(tmp) << std::lround(value * m_model.scale) << '\n';
        std::filesystem::rename(tmp, input());
    }
    void run() {
        const double cpus = static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN));
        const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
        long long before = workTicks();
        // The last 3 s of the work's CPU time and of the time it took: whole bandwidth windows of up to 1 s,
        // so that a share measured at any phase of a window is the window's, not a burst's part of it.
        std::vector<std::pair<double, double>> recent;
        auto last = std::chrono::steady_clock::now();
        while (!m_stop) {
            std::this_thread::sleep_for(100ms); // the model's step; it integrates over the time measured

            const auto now = std::chrono::steady_clock::now();
            const double dt = std::chrono::duration<double>(now - last).count();
            last = now;
            const long long ticks = workTicks();
            const double used = static_cast<double>(ticks - before) / tick;
            const double share = std::clamp(used / (dt * cpus), 0.0, 1.0);
            before = ticks;
            recent.emplace_back(used, dt);
            if (recent.size() > 30) {
                recent.erase(recent.begin());
            }
            double v = m_value.load();
            v += (m_model.rest + m_model.gain * share - v) * (1.0 - std::exp(-dt / m_model.tau));
            m_value = v;
            double cpu = 0.0;
            double span = 0.0;
            for (const auto& [u, d] : recent) {
                cpu += u;
                span += d;
            }
            m_share = std::clamp(cpu / (span * cpus), 0.0, 1.0);
            write(v);
        }
    }

    std::filesystem::path m_dir;
    SensorModel m_model;
    std::atomic<double> m_value;
    std::atomic<double> m_share{0.0};
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

} // namespace nicer::test
