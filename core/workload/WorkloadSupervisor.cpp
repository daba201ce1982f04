#include "workload/WorkloadSupervisor.h"

#include "util/Log.h"

#include <algorithm>
#include <csignal>
#include <unistd.h>
#include <utility>

namespace nicer::workload {

using usermanager::ExecCommand;
using usermanager::Properties;

WorkloadSupervisor::WorkloadSupervisor(usermanager::UnitManager& units, WorkloadSpec spec, std::string slice,
                                       std::string bindTo, std::string unitPrefix)
    : m_units(units)
    , m_spec(std::move(spec))
    , m_slice(std::move(slice))
    , m_bindTo(std::move(bindTo))
    , m_unitPrefix(std::move(unitPrefix)) {}

Result<std::string> WorkloadSupervisor::executableFor(const WorkloadSpec& spec,
                                                      const std::string& pathVariable) {
    if (spec.argv.empty()) {
        return Error{"no workload command is configured"};
    }
    if (spec.instances < 1) {
        return Error{"instances = " + std::to_string(spec.instances) + ": at least one instance is needed"};
    }
    return resolveExecutable(spec.argv.front(), pathVariable);
}

Result<void> WorkloadSupervisor::start(Clock::time_point now, const std::string& pathVariable) {
    auto executable = executableFor(m_spec, pathVariable);
    if (!executable) {
        return executable.error();
    }
    m_executable = std::move(*executable);
    return startInstances(now);
}

Result<void> WorkloadSupervisor::startInstances(Clock::time_point now) {
    m_instances.clear();
    for (int i = 1; i <= m_spec.instances; ++i) {
        Instance instance;
        instance.unit = m_unitPrefix + "-" + std::to_string(i) + ".service";
        m_instances.push_back(std::move(instance));
    }
    for (auto& instance : m_instances) {
        // A unit of the same name left by a crashed run would make the start fail: stop it first.
        (void)m_units.stopUnit(instance.unit, true);
        (void)m_units.resetFailedUnit(instance.unit);
        if (auto started = startInstance(instance, now); !started) {
            return started;
        }
    }
    return {};
}

Result<void> WorkloadSupervisor::switchTo(WorkloadSpec spec, Clock::time_point now,
                                          const std::string& pathVariable) {
    auto executable = executableFor(spec, pathVariable);
    if (!executable) {
        return executable.error();
    }
    // The stops are waited for (their JobRemoved, on nicerd's loop, up to 30 s each): the new instances take
    // the same unit names, which systemd refuses while the old units are loaded. Going on without the
    // answer would need new names per switch and poll() to keep the old ones' ends apart.
    if (auto stopped = stopInstances(); !stopped) {
        // The instances that did stop are restarted by poll(), as after any death.
        return Error{"cannot stop the running workload, so it stays: " + stopped.error().message};
    }
    const std::string wanted = spec.argv.front();
    WorkloadSpec previous = std::exchange(m_spec, std::move(spec));
    std::string previousExecutable = std::exchange(m_executable, std::move(*executable));
    auto started = startInstances(now);
    if (started) {
        return {};
    }
    (void)stopInstances();
    m_spec = std::move(previous);
    m_executable = std::move(previousExecutable);
    auto restored = startInstances(now);
    return Error{"cannot start " + wanted + ": " + started.error().message +
                 (restored ? "; the previous workload runs again"
                           : "; the previous workload did not start again either (" +
                                 restored.error().message + "); nicerd keeps trying to restart it")};
}

Result<void> WorkloadSupervisor::startInstance(Instance& instance, Clock::time_point now) {
    Properties props{
        {"Description",
         std::string(m_spec.demo ? "nicer demo workload: " : "nicer volunteer work: ") + m_spec.argv.front()},
        {"Slice", m_slice},
        {"ExecStart", std::vector<ExecCommand>{{m_executable, m_spec.argv, false}}},
        // Dead instances are unloaded at once, so the same name can be started again.
        {"CollectMode", std::string("inactive-or-failed")},
        {"Nice", std::int32_t{19}},
        // The work dies first and waits for the disk last, as in the root idle slice (nicer-work@.service):
        // the kernel's OOM killer takes it before any other program of the user (the manager's own services
        // have 100 to 200), and its I/O has the idle class.
        {"OOMScoreAdjust", std::int32_t{1000}},
        {"IOSchedulingClass", std::int32_t{3}}, // IOPRIO_CLASS_IDLE
    };
    if (!m_bindTo.empty()) {
        props.push_back({"BindsTo", std::vector<std::string>{m_bindTo}});
        props.push_back({"After", std::vector<std::string>{m_bindTo}});
    }
    auto started = m_units.startTransientUnit(instance.unit, props, false);
    if (!started) {
        return started;
    }
    instance.startedAt = now;
    instance.restartAt.reset();
    instance.state = usermanager::UnitState::Activating;
    instance.hold = Instance::Hold::None; // a new unit, in a new cgroup
    return {};
}

Result<void> WorkloadSupervisor::holdToLimit() {
    using Hold = Instance::Hold;
    Result<void> firstError;
    const auto keep = [&firstError](const Result<void>& done, const std::string& what) {
        if (!done && firstError) {
            firstError = done.error().within("cannot " + what + ": ");
        }
        return done.ok();
    };
    for (std::size_t i = 0; i < m_instances.size(); ++i) {
        auto& instance = m_instances[i];
        const bool hold = m_runningLimit > 0 && i >= static_cast<std::size_t>(m_runningLimit);
        if (!hold) {
            if (instance.hold != Hold::None) {
                const bool frozen = instance.hold == Hold::Frozen;
                if (keep(frozen ? m_units.thawUnit(instance.unit) : m_units.killUnit(instance.unit, SIGCONT),
                         (frozen ? "thaw " : "continue ") + instance.unit)) {
                    instance.hold = Hold::None;
                }
            }
            continue;
        }
        if (instance.hold == Hold::Frozen || instance.state != usermanager::UnitState::Active) {
            continue; // held, or not running yet: held once it is
        }
        if (instance.hold == Hold::None && m_units.freezeUnit(instance.unit)) {
            instance.hold = Hold::Frozen;
            continue;
        }
        // Every period while held: processes started since, and a SIGCONT the slice's resume sent to all.
        if (keep(m_units.killUnit(instance.unit, SIGSTOP), "stop " + instance.unit)) {
            instance.hold = Hold::Stopped;
        }
    }
    return firstError;
}

void WorkloadSupervisor::release(Instance& instance) {
    if (instance.hold == Instance::Hold::Frozen) {
        (void)m_units.thawUnit(instance.unit);
    } else if (instance.hold == Instance::Hold::Stopped) {
        (void)m_units.killUnit(instance.unit, SIGCONT);
    }
    instance.hold = Instance::Hold::None;
}

Result<void> WorkloadSupervisor::endToCount() {
    Result<void> firstError;
    const auto first = m_instances.size() -
                       std::min(m_instances.size(), static_cast<std::size_t>(std::max(0, m_endedCount)));
    for (std::size_t i = first; i < m_instances.size(); ++i) {
        auto& instance = m_instances[i];
        if (instance.ended) {
            continue;
        }
        release(instance);
        if (auto stopped = m_units.stopUnit(instance.unit, false); !stopped && firstError) {
            firstError = stopped.error().within("cannot end " + instance.unit + " to free its memory: ");
            continue;
        }
        instance.ended = true;
        instance.restartAt.reset();
        log::notice() << "nicerd: ended " << instance.unit << " to free its memory";
    }
    return firstError;
}

int WorkloadSupervisor::ended() const {
    return static_cast<int>(
        std::count_if(m_instances.begin(), m_instances.end(), [](const Instance& i) { return i.ended; }));
}

int WorkloadSupervisor::running() const {
    return static_cast<int>(std::count_if(m_instances.begin(), m_instances.end(), [](const Instance& i) {
        return i.state == usermanager::UnitState::Active && i.hold == Instance::Hold::None;
    }));
}

Result<void> WorkloadSupervisor::poll(Clock::time_point now) {
    Result<void> firstError = endToCount();
    const auto firstEnded = m_instances.size() -
                            std::min(m_instances.size(), static_cast<std::size_t>(std::max(0, m_endedCount)));
    for (std::size_t i = 0; i < m_instances.size(); ++i) {
        auto& instance = m_instances[i];
        if (instance.ended && i < firstEnded) {
            // The count fell: this one starts again now, with a fresh backoff.
            instance.ended = false;
            instance.restartAt = now;
            instance.backoff = kFirstBackoff;
        }
        if (instance.ended) {
            instance.state = usermanager::UnitState::Inactive;
            continue;
        }
        auto state = m_units.activeState(instance.unit);
        if (!state) {
            if (firstError) {
                firstError = state.error();
            }
            continue;
        }
        instance.state = *state;
        const bool dead =
            *state == usermanager::UnitState::Inactive || *state == usermanager::UnitState::Failed;
        if (!dead) {
            continue;
        }
        if (!instance.restartAt) {
            // It just died: young deaths double the wait, a long run earns a fresh start.
            instance.backoff =
                now - instance.startedAt >= kStableRun
                    ? kFirstBackoff
                    : (instance.restarts == 0 ? kFirstBackoff : std::min(instance.backoff * 2, kMaxBackoff));
            instance.restartAt = now + instance.backoff;
        }
        if (now >= *instance.restartAt) {
            (void)m_units.resetFailedUnit(instance.unit);
            if (auto started = startInstance(instance, now); !started) {
                // Try again after the backoff, not every period.
                instance.restartAt = now + instance.backoff;
                if (firstError) {
                    firstError = started;
                }
                continue;
            }
            ++instance.restarts;
        }
    }
    // Held once a period, and said once: a unit that cannot be frozen runs, as it did before.
    auto held = holdToLimit();
    if (!held && held.error().message != m_limitError) {
        m_limitError = held.error().message;
        log::warning() << "nicerd: " << m_limitError;
    } else if (held) {
        m_limitError.clear();
    }
    return firstError;
}

Result<void> WorkloadSupervisor::stopInstances() {
    Result<void> firstError;
    for (auto& instance : m_instances) {
        // Let go first: a frozen or stopped process cannot act on the stop signal (save its progress).
        release(instance);
        instance.ended = false;
        if (auto stopped = m_units.stopUnit(instance.unit, true); !stopped && firstError) {
            firstError = stopped;
        }
        instance.state = usermanager::UnitState::Inactive;
        instance.restartAt.reset();
    }
    return firstError;
}

Result<void> WorkloadSupervisor::stop() {
    Result<void> firstError = stopInstances();
    for (const auto& scope : m_adoptedScopes) {
        if (auto stopped = m_units.stopUnit(scope, true); !stopped && firstError) {
            firstError = stopped;
        }
    }
    m_adoptedScopes.clear();
    return firstError;
}

Result<void> WorkloadSupervisor::adopt(const std::vector<pid_t>& pids) {
    if (pids.empty()) {
        return Error{"no process to adopt"};
    }
    std::vector<std::uint32_t> ids(pids.begin(), pids.end());
    const std::string scope = m_unitPrefix + "-adopted-" + std::to_string(::getpid()) + "-" +
                              std::to_string(m_adoptedScopes.size() + 1) + ".scope";
    Properties props{
        {"Description", std::string("nicer: adopted volunteer work")},
        {"Slice", m_slice},
        {"PIDs", ids},
        {"CollectMode", std::string("inactive-or-failed")},
    };
    if (!m_bindTo.empty()) {
        props.push_back({"BindsTo", std::vector<std::string>{m_bindTo}});
        props.push_back({"After", std::vector<std::string>{m_bindTo}});
    }
    if (auto started = m_units.startTransientUnit(scope, props, true); !started) {
        return Error{"cannot adopt the processes (they must be yours and still running): " +
                     started.error().message};
    }
    m_adoptedScopes.push_back(scope);
    return {};
}

void WorkloadSupervisor::describe(api::DaemonState& state) const {
    state.workload = m_spec.argv;
    state.demoWorkload = m_spec.demo;
    state.instances = static_cast<std::uint32_t>(m_spec.instances);
    state.instancesRunning = static_cast<std::uint32_t>(running());
    state.instancesStopped = static_cast<std::uint32_t>(ended());
    state.workloadPreset = m_spec.preset;
}

} // namespace nicer::workload
