#include "daemon/BoincClock.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nicer::daemon {

double BoincClock::lead(const ClockTask& task) const {
    if (task.gpu || task.cpus <= 0.0) {
        return 0.0;
    }
    return task.elapsed - (1.0 + m_options.slack) * task.cpu / task.cpus - m_options.leadSeconds;
}

bool BoincClock::onTasks(Clock::time_point now, const std::vector<ClockTask>& running, bool busy) {
    forget(now);
    std::map<std::string, std::pair<Clock::time_point, double>> seen;
    Progress progress{now};
    for (const auto& task : running) {
        if (task.gpu || task.cpus <= 0.0) {
            continue;
        }
        seen[task.name] = {now, task.cpu};
        if (auto last = m_last.find(task.name); last != m_last.end() && task.cpu >= last->second.second) {
            const std::chrono::duration<double> wall = now - last->second.first;
            progress.cpu += task.cpu - last->second.second;
            progress.capacity += wall.count() * task.cpus;
        }
    }
    m_last = std::move(seen);
    if (progress.capacity > 0.0) {
        m_progress.push_back(progress);
    }
    if (m_stopped || busy || now - m_continuedAt < m_options.window) {
        return false;
    }
    return std::ranges::any_of(running, [this](const ClockTask& task) { return lead(task) > 0.0; });
}

void BoincClock::stopped(Clock::time_point now) {
    if (!m_stopped) {
        m_stopped = true;
        m_stops.push_back({now, now});
    }
}

void BoincClock::continued(Clock::time_point now) {
    if (m_stopped) {
        m_stopped = false;
        m_stops.back().to = now;
    }
    m_continuedAt = now;
}

void BoincClock::forget(Clock::time_point now) {
    const auto horizon = now - kHistory;
    while (!m_stops.empty() && m_stops.front().to != m_stops.front().from && m_stops.front().to < horizon) {
        m_stops.pop_front();
    }
    while (!m_progress.empty() && m_progress.front().time < horizon) {
        m_progress.pop_front();
    }
}

double BoincClock::countedShare(Clock::time_point now) const {
    const auto horizon = now - kHistory;
    std::chrono::duration<double> stopped{0};
    for (const auto& span : m_stops) {
        const auto to = span.to == span.from ? now : span.to;
        const auto from = std::max(span.from, horizon);
        if (to > from) {
            stopped += to - from;
        }
    }
    return std::clamp(1.0 - stopped / std::chrono::duration<double>(kHistory), 0.0, 1.0);
}

double BoincClock::taskSpeed() const {
    double cpu = 0.0;
    double capacity = 0.0;
    for (const auto& p : m_progress) {
        cpu += p.cpu;
        capacity += p.capacity;
    }
    return capacity > 0.0 ? std::min(cpu / capacity, 1.0) : -1.0;
}

std::string BoincClock::describe(Clock::time_point now) const {
    const double counted = countedShare(now);
    if (counted >= 1.0) {
        return {};
    }
    char text[160];
    const double speed = taskSpeed();
    if (speed < 0.0) {
        std::snprintf(text, sizeof text, "kept: BOINC counted %.0f%% of the last minute", counted * 100.0);
    } else {
        std::snprintf(text, sizeof text,
                      "kept: BOINC counted %.0f%% of the last minute; its tasks ran at %.0f%% of their CPUs",
                      counted * 100.0, speed * 100.0);
    }
    return text;
}

} // namespace nicer::daemon
