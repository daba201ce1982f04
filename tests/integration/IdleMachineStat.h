#pragma once

// An idle machine's /proc/stat for nicerd (--proc-stat), rewritten as time passes.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace nicer::test {

/**
 * A /proc/stat for nicerd (--proc-stat) showing an idle two-CPU machine, so that the controller thaws the
 * work whatever else runs here: the tests that use it check which processes run, not their CPU shares.
 */
class IdleMachineStat {
public:
    explicit IdleMachineStat(std::filesystem::path path)
        : m_path(std::move(path)) {
        write();
        m_thread = std::thread([this] {
            while (!m_stop) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                write();
            }
        });
    }
    ~IdleMachineStat() {
        m_stop = true;
        m_thread.join();
    }
    IdleMachineStat(const IdleMachineStat&) = delete;
    IdleMachineStat& operator=(const IdleMachineStat&) = delete;

    std::string path() const { return m_path.string(); }

private:
    void write() {
        m_idleTicks += 5;
        const auto line = [&](const std::string& label, std::uint64_t cpus) {
            return label + " 100 0 100 " + std::to_string(cpus * m_idleTicks) + " 0 0 0 0 0 0\n";
        };
        // Renamed into place, so that nicerd never reads half a file.
        const auto tmp = m_path.string() + ".tmp";
        std::ofstream(tmp) << line("cpu ", 2) << line("cpu0", 1) << line("cpu1", 1);
        std::filesystem::rename(tmp, m_path);
    }

    std::filesystem::path m_path;
    std::uint64_t m_idleTicks = 1000;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

} // namespace nicer::test
