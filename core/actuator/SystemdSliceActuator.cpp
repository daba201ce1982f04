#include "actuator/SystemdSliceActuator.h"

#include <csignal>
#include <utility>

namespace nicer::actuator {

using systemd::Properties;
using systemd::Property;

Result<std::unique_ptr<SystemdSliceActuator>> SystemdSliceActuator::create(systemd::UnitManager& units,
                                                                           systemd::CgroupLayout layout,
                                                                           std::string slice,
                                                                           const SliceOptions& options) {
    const auto base = [&](std::uint64_t weight) {
        Properties props{
            {"Description", std::string("nicer: volunteer work, capped to the machine's spare CPU")},
            {"CPUAccounting", true},
            {"CPUWeight", weight},
            {"CPUQuotaPerSecUSec", kMinQuotaPerSecUSec},
        };
        // Only another period than systemd's own is sent: systemd before 242 does not know the property.
        if (options.quotaPeriod != SliceOptions{}.quotaPeriod) {
            props.push_back({"CPUQuotaPeriodUSec", static_cast<std::uint64_t>(options.quotaPeriod.count())});
        }
        return props;
    };
    // CPUWeight 0 is "idle" (cpu.idle on v2, the smallest shares on v1); older systemd only takes 1..10000.
    // 100 is systemd's default weight.
    const std::uint64_t weight = options.idleWeight ? 0 : 100;
    const std::uint64_t fallbackWeight = options.idleWeight ? 1 : 100;
    const auto setBase = [&]() -> Result<void> {
        if (auto set = units.setUnitProperties(slice, base(weight)); set || weight == fallbackWeight) {
            return set;
        }
        return units.setUnitProperties(slice, base(fallbackWeight));
    };
    // A slice left by a crashed run is taken over as it is; its properties are set again below.
    auto state = units.activeState(slice);
    if (!state) {
        return state.error();
    }
    if (*state != "active") {
        auto started = units.startTransientUnit(slice, base(weight), true);
        if (!started && weight != fallbackWeight) {
            started = units.startTransientUnit(slice, base(fallbackWeight), true);
        }
        if (!started) {
            // systemd refuses a transient unit that it loads from a file: the user's own nicer.slice (for a
            // MemoryMax=, say), or the transient file of a user manager that crashed with the slice loaded.
            // That slice is used: nicer's properties are set on it at runtime only, and it is started.
            auto file = units.unitFile(slice);
            if (!file || file->empty()) {
                return started.error();
            }
            auto fromFile = setBase();
            if (fromFile) {
                fromFile = units.startUnit(slice, true);
            }
            if (!fromFile) {
                return Error{"cannot start " + slice + " from its unit file " + *file + ": " +
                             fromFile.error().message};
            }
        }
    } else if (auto set = setBase(); !set) {
        return set.error();
    }
    const bool takenOver = *state == "active";

    auto cgroup = units.controlGroup(slice);
    if (!cgroup) {
        return cgroup.error();
    }
    if (cgroup->empty() || !layout.cpuQuotaFile(*cgroup)) {
        (void)units.stopUnit(slice, true);
        return Error{"the systemd user manager does not delegate the cpu controller (no CPU quota file for " +
                     slice + "), so it cannot cap the work"};
    }
    if (takenOver) {
        // A daemon that died while the work was frozen left it frozen: thaw by every method, or the work
        // (and any unit started in the slice) would never run again.
        (void)units.thawUnit(slice);
        (void)layout.setFrozen(*cgroup, false);
        (void)units.killUnit(slice, SIGCONT);
    }
    auto actuator = std::unique_ptr<SystemdSliceActuator>(
        new SystemdSliceActuator(units, std::move(layout), std::move(slice), std::move(*cgroup)));
    actuator->m_appliedUSec = kMinQuotaPerSecUSec;
    return actuator;
}

SystemdSliceActuator::SystemdSliceActuator(systemd::UnitManager& units, systemd::CgroupLayout layout,
                                           std::string slice, std::string cgroup)
    : m_units(units)
    , m_layout(std::move(layout))
    , m_slice(std::move(slice))
    , m_cgroup(std::move(cgroup)) {}

Result<void> SystemdSliceActuator::apply(double quota, int cpuCount) {
    if (auto applied = applyThroughSystemd(quota, cpuCount); !applied) {
        // SIGSTOP every period of the outage: processes started since (restarts) stop too.
        auto held = m_layout.signalAll(m_cgroup, SIGSTOP);
        m_heldWithoutSystemd = held.ok();
        return Error{applied.error().message +
                     (held ? "; the work is held (SIGSTOP) until systemd answers again"
                           : "; the work could not be held either: " + held.error().message)};
    }
    if (m_heldWithoutSystemd) {
        // The cap (or systemd's freeze) is in place again before the processes continue.
        if (auto resumed = m_layout.signalAll(m_cgroup, SIGCONT); !resumed) {
            return resumed.error();
        }
        m_heldWithoutSystemd = false;
    }
    return {};
}

Result<void> SystemdSliceActuator::applyThroughSystemd(double quota, int cpuCount) {
    if (quota <= 0.0) {
        return freeze();
    }
    const std::uint64_t usec = quotaPerSecUSec(quota, cpuCount);
    if (usec != m_appliedUSec) {
        // Lower the cap before thawing, so the thawed work never runs above the new quota.
        if (auto set = m_units.setUnitProperties(m_slice, {{"CPUQuotaPerSecUSec", usec}}); !set) {
            return set;
        }
        m_appliedUSec = usec;
    }
    return m_frozen ? thaw() : Result<void>{};
}

Result<void> SystemdSliceActuator::freeze() {
    // SIGSTOP is sent every period while frozen, so that processes started since (restarts) stop too; the
    // other two methods freeze the whole cgroup, new children included.
    // The order is the fail-safe's: when nicerd dies, systemd stops the work bound to it, and that stop
    // thaws its own freezer and sends SIGCONT after SIGTERM, but knows nothing of a cgroup.freeze nicer
    // wrote, so the work would sit frozen until its stop timeout. cgroup.freeze is the last resort.
    if (m_frozen && m_freezeMethod != "SIGSTOP") {
        return {};
    }
    if (m_freezeMethod.empty() || m_freezeMethod == "systemd") {
        if (m_units.freezeUnit(m_slice)) {
            m_freezeMethod = "systemd";
            m_frozen = true;
            return {};
        }
    }
    auto stopped = m_units.killUnit(m_slice, SIGSTOP);
    if (stopped) {
        m_freezeMethod = "SIGSTOP";
        m_frozen = true;
        return {};
    }
    if (m_layout.setFrozen(m_cgroup, true)) {
        m_freezeMethod = "cgroup.freeze";
        m_frozen = true;
        return {};
    }
    return Error{"cannot freeze " + m_slice + ": " + stopped.error().message};
}

Result<void> SystemdSliceActuator::thaw() {
    Result<void> thawed;
    if (m_freezeMethod == "systemd") {
        thawed = m_units.thawUnit(m_slice);
    } else if (m_freezeMethod == "cgroup.freeze") {
        thawed = m_layout.setFrozen(m_cgroup, false);
    } else {
        thawed = m_units.killUnit(m_slice, SIGCONT);
    }
    if (thawed) {
        m_frozen = false;
    }
    return thawed;
}

Result<std::uint64_t> SystemdSliceActuator::workCpuNSec() {
    auto usage = m_units.cpuUsageNSec(m_slice);
    if (usage && *usage != systemd::kNoUsage) {
        return usage;
    }
    // systemd does not account CPU on some cgroup v1 setups: read the kernel's counter directly.
    return m_layout.readCpuUsageNSec(m_cgroup);
}

Result<void> SystemdSliceActuator::release() {
    if (m_heldWithoutSystemd) {
        (void)m_layout.signalAll(m_cgroup, SIGCONT);
        m_heldWithoutSystemd = false;
    }
    return m_frozen ? thaw() : Result<void>{};
}

} // namespace nicer::actuator
