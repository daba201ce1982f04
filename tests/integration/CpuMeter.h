#pragma once

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace nicer::test {

/// utime + stime of a process from /proc/<pid>/stat, in clock ticks; -1 when it is gone.
inline long long processCpuTicks(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(in, text)) {
        return -1;
    }
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
        if (i == 14)
            utime = std::stoll(field);
        if (i == 15)
            stime = std::stoll(field);
    }
    return utime + stime;
}

/// The share of the whole machine that the processes listed by @p pids used over @p window, measured from
/// their CPU time in /proc (a process that appears during the window counts from zero).
inline double machineShare(const std::function<std::vector<pid_t>()>& pids,
                           std::chrono::milliseconds window) {
    std::map<pid_t, long long> before;
    for (const pid_t p : pids()) {
        before[p] = processCpuTicks(p);
    }
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(window);
    long long used = 0;
    for (const pid_t p : pids()) {
        const long long now = processCpuTicks(p);
        const auto it = before.find(p);
        if (now >= 0) {
            used += now - (it != before.end() && it->second >= 0 ? it->second : 0);
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpus = static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN));
    return static_cast<double>(used) / static_cast<double>(::sysconf(_SC_CLK_TCK)) / (seconds * cpus);
}

/// Busy loops outside nicer's slice, on every CPU unless @p cpus says how many: the user's own programs
/// wanting the whole machine (or part of it). They die with the test process, however it ends.
class ForegroundHog {
public:
    explicit ForegroundHog(long cpus = ::sysconf(_SC_NPROCESSORS_ONLN)) {
        for (long i = 0; i < cpus; ++i) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                ::prctl(PR_SET_PDEATHSIG, SIGKILL);
                volatile unsigned long spin = 0;
                for (;;) {
                    spin = spin + 1;
                }
            }
            m_pids.push_back(pid);
        }
    }
    ~ForegroundHog() { stop(); }
    ForegroundHog(const ForegroundHog&) = delete;
    ForegroundHog& operator=(const ForegroundHog&) = delete;

    const std::vector<pid_t>& pids() const { return m_pids; }
    void stop() {
        for (const pid_t p : m_pids) {
            ::kill(p, SIGKILL);
            ::waitpid(p, nullptr, 0);
        }
        m_pids.clear();
    }

private:
    std::vector<pid_t> m_pids;
};

} // namespace nicer::test
