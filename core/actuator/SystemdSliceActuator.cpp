#include "actuator/SystemdSliceActuator.h"

#include "actuator/ActuatorNote.h"

#include <csignal>
#include <optional>
#include <utility>
#include <vector>

namespace nicer::actuator {

using usermanager::Properties;
using usermanager::Property;
using usermanager::UnitManager;

namespace {

// The quota in force is not known (systemd refused or did not answer the last write): never a quota sent.
constexpr std::uint64_t kQuotaUnknown = 0;

// What is set on the slice besides its quota, in one of the forms that systemd may take.
struct SliceBase {
    std::uint64_t weight;
    std::optional<std::chrono::microseconds> window; // unset: systemd's own, not sent
};

// nicer's wish first, then the fallbacks for older systemd: CPUWeight 0 ("idle": cpu.idle on v2, the
// smallest shares on v1) needs systemd 252, before which 1 is the smallest; CPUQuotaPeriodUSec needs 242,
// before which the window stays systemd's 100 ms. 100 is systemd's default weight.
std::vector<SliceBase> basesToTry(const SliceOptions& options) {
    // A window asked for is sent even when it is systemd's own: a slice taken over may have another.
    const std::optional<std::chrono::microseconds> window = options.quotaPeriod;
    std::vector<SliceBase> bases{{options.idleWeight ? 0U : 100U, window}};
    if (options.idleWeight) {
        bases.push_back({1, window});
    }
    if (window) {
        bases.push_back({bases.back().weight, std::nullopt});
    }
    return bases;
}

Properties sliceProperties(const SliceBase& base) {
    Properties props{
        {"Description", std::string("nicer: volunteer work, capped to the machine's spare CPU")},
        {"CPUAccounting", true},
        {"CPUWeight", base.weight},
        {"CPUQuotaPerSecUSec", kMinQuotaPerSecUSec},
    };
    if (base.window) {
        props.push_back({"CPUQuotaPeriodUSec", static_cast<std::uint64_t>(base.window->count())});
    }
    return props;
}

// Each base in turn until systemd takes one; the error is the first's, which says what nicer wanted.
template <typename Call>
Result<SliceBase> firstTaken(const std::vector<SliceBase>& bases, Call&& call) {
    Result<void> first;
    for (const auto& base : bases) {
        auto done = call(sliceProperties(base));
        if (done) {
            return base;
        }
        if (first) {
            first = done;
        }
    }
    return first.error();
}

// Sets the properties on a slice that is already loaded (taken over, or from a unit file), at runtime only.
Result<SliceBase> setBase(UnitManager& units, const std::string& slice, const std::vector<SliceBase>& bases) {
    return firstTaken(bases, [&](const Properties& props) { return units.setUnitProperties(slice, props); });
}

// systemd refuses a transient unit that it loads from a file: the user's own nicer.slice (for a
// MemoryMax=, say), or the transient file of a user manager that crashed with the slice loaded. That slice
// is used: nicer's properties are set on it at runtime only, and it is started.
Result<SliceBase> startFromUnitFile(UnitManager& units, const std::string& slice,
                                    const std::vector<SliceBase>& bases, const Error& transientRefused) {
    auto file = units.unitFile(slice);
    if (!file || file->empty()) {
        return transientRefused;
    }
    auto taken = setBase(units, slice, bases);
    Result<void> started = taken ? units.startUnit(slice, true) : Result<void>(taken.error());
    if (!started) {
        return Error{"cannot start " + slice + " from its unit file " + *file + ": " +
                     started.error().message};
    }
    return taken;
}

Result<SliceBase> startSlice(UnitManager& units, const std::string& slice,
                             const std::vector<SliceBase>& bases) {
    auto taken = firstTaken(
        bases, [&](const Properties& props) { return units.startTransientUnit(slice, props, true); });
    if (taken) {
        return taken;
    }
    return startFromUnitFile(units, slice, bases, taken.error());
}

// The slice's cgroup, when it has a CPU quota file to cap the work with; else the slice is stopped again.
Result<std::string> cappableCgroup(UnitManager& units, const kernel::CgroupLayout& layout,
                                   const std::string& slice) {
    auto cgroup = units.controlGroup(slice);
    if (!cgroup) {
        return cgroup.error();
    }
    if (cgroup->empty() || !layout.cpuQuotaFile(*cgroup)) {
        (void)units.stopUnit(slice, true);
        return Error{"the systemd user manager does not delegate the cpu controller (no CPU quota file for " +
                     slice + "), so it cannot cap the work"};
    }
    return cgroup;
}

// A daemon that died while the work was frozen left it frozen: thaw by every method, or the work (and any
// unit started in the slice) would never run again.
void thawLeftFrozen(UnitManager& units, const kernel::CgroupLayout& layout, const std::string& slice,
                    const std::string& cgroup) {
    (void)units.thawUnit(slice);
    (void)layout.setFrozen(cgroup, false);
    (void)units.killUnit(slice, SIGCONT);
}

} // namespace

Result<std::unique_ptr<SystemdSliceActuator>> SystemdSliceActuator::create(UnitManager& units,
                                                                           kernel::CgroupLayout layout,
                                                                           std::string slice,
                                                                           const SliceOptions& options) {
    const std::vector<SliceBase> bases = basesToTry(options);
    // A slice left by a crashed run is taken over as it is; its properties are set again.
    auto state = units.activeState(slice);
    if (!state) {
        return state.error();
    }
    const bool takenOver = *state == usermanager::UnitState::Active;
    auto taken = takenOver ? setBase(units, slice, bases) : startSlice(units, slice, bases);
    if (!taken) {
        return taken.error();
    }
    auto cgroup = cappableCgroup(units, layout, slice);
    if (!cgroup) {
        return cgroup.error();
    }
    if (takenOver) {
        thawLeftFrozen(units, layout, slice, *cgroup);
    }
    auto actuator = std::unique_ptr<SystemdSliceActuator>(
        new SystemdSliceActuator(units, std::move(layout), std::move(slice), std::move(*cgroup)));
    actuator->m_appliedUSec = kMinQuotaPerSecUSec;
    actuator->m_window = taken->window.value_or(kSystemdQuotaPeriod);
    if (options.idleWeight && taken->weight != 0) {
        auto version = units.managerVersion();
        actuator->m_note = idleWeightRefusedNote(version ? *version : std::string());
    }
    return actuator;
}

SystemdSliceActuator::SystemdSliceActuator(usermanager::UnitManager& units, kernel::CgroupLayout layout,
                                           std::string slice, std::string cgroup)
    : m_units(units)
    , m_layout(std::move(layout))
    , m_slice(std::move(slice))
    , m_cgroup(std::move(cgroup)) {}

Result<void> SystemdSliceActuator::apply(double quota, int cpuCount) {
    // The answers to earlier periods' quotas, which nicerd's loop did not wait for. One that systemd refused,
    // or did not answer in time, is not in force: it is sent again, and its failure is this period's.
    const auto writes = m_units.takePropertyWrites(m_slice, "CPUQuotaPerSecUSec");
    if (!writes.failure) {
        m_appliedUSec = kQuotaUnknown;
    }
    auto applied = applyThroughSystemd(quota, cpuCount);
    if (applied && !m_frozen) { // a frozen slice needs no cap
        applied = writes.failure;
    }
    if (!applied) {
        // SIGSTOP every period of the outage: processes started since (restarts) stop too.
        auto held = m_layout.signalAll(m_cgroup, SIGSTOP);
        m_heldWithoutSystemd = held.ok();
        return Error{applied.error().message +
                     (held ? "; the work is held (SIGSTOP) until systemd answers again"
                           : "; the work could not be held either: " + held.error().message)};
    }
    if (m_heldWithoutSystemd && !writes.pending) {
        // The cap systemd took last (or systemd's freeze) is in place again before the processes continue.
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
    if (m_frozen) {
        // Lower the cap before thawing, so the thawed work never runs above the new quota: this write waits
        // for systemd's answer (a thaw through cgroup.freeze would not queue behind it).
        if (usec != m_appliedUSec) {
            if (auto set = m_units.setUnitProperties(m_slice, {{"CPUQuotaPerSecUSec", usec}}); !set) {
                return set;
            }
            m_appliedUSec = usec;
        }
        return thaw();
    }
    if (usec != m_appliedUSec) {
        // Not waited for: a slow manager must not hold up nicerd's loop. Its answer is taken next period.
        m_units.setUnitPropertiesAsync(m_slice, {{"CPUQuotaPerSecUSec", usec}});
        m_appliedUSec = usec;
    }
    return {};
}

Result<void> SystemdSliceActuator::freeze() {
    // SIGSTOP is sent every period while frozen, so that processes started since (restarts) stop too; the
    // other two methods freeze the whole cgroup, new children included.
    // The order is the fail-safe's: when nicerd dies, systemd stops the work bound to it, and that stop
    // thaws its own freezer and sends SIGCONT after SIGTERM, but knows nothing of a cgroup.freeze nicer
    // wrote, so the work would sit frozen until its stop timeout. cgroup.freeze is the last resort.
    if (m_frozen && m_freezeMethod != FreezeMethod::Sigstop) {
        return {};
    }
    if (!m_freezeMethod || m_freezeMethod == FreezeMethod::Systemd) {
        if (m_units.freezeUnit(m_slice)) {
            m_freezeMethod = FreezeMethod::Systemd;
            m_frozen = true;
            return {};
        }
    }
    auto stopped = m_units.killUnit(m_slice, SIGSTOP);
    if (stopped) {
        m_freezeMethod = FreezeMethod::Sigstop;
        m_frozen = true;
        return {};
    }
    if (m_layout.setFrozen(m_cgroup, true)) {
        m_freezeMethod = FreezeMethod::CgroupFreeze;
        m_frozen = true;
        return {};
    }
    return Error{"cannot freeze " + m_slice + ": " + stopped.error().message};
}

Result<void> SystemdSliceActuator::thaw() {
    Result<void> thawed;
    if (m_freezeMethod == FreezeMethod::Systemd) {
        thawed = m_units.thawUnit(m_slice);
    } else if (m_freezeMethod == FreezeMethod::CgroupFreeze) {
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
    if (usage && *usage != usermanager::kNoUsage) {
        return usage;
    }
    // systemd does not account CPU on some cgroup v1 setups: read the kernel's counter directly.
    return m_layout.readCpuUsageNSec(m_cgroup);
}

Result<void> SystemdSliceActuator::setBandwidthWindow(std::chrono::microseconds window) {
    if (window == m_window) {
        return {};
    }
    if (auto set = m_units.setUnitProperties(
            m_slice, {{"CPUQuotaPeriodUSec", static_cast<std::uint64_t>(window.count())}});
        !set) {
        return Error{"cannot make the CPU bandwidth window of " + m_slice + " " +
                     std::to_string(window.count() / 1000) + " ms: " + set.error().message};
    }
    m_window = window;
    return {};
}

Result<void> SystemdSliceActuator::release() {
    if (m_heldWithoutSystemd) {
        (void)m_layout.signalAll(m_cgroup, SIGCONT);
        m_heldWithoutSystemd = false;
    }
    return m_frozen ? thaw() : Result<void>{};
}

} // namespace nicer::actuator
