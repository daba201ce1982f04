#include "daemon/WorkSlice.h"

#include "actuator/ActuatorNote.h"
#include "actuator/BandwidthWindows.h"
#include "actuator/SliceMemoryLimit.h"
#include "actuator/SystemdSliceActuator.h"
#include "kernel/MemInfo.h"
#include "util/Log.h"
#include "util/Text.h"
#include "workload/WorkloadSupervisor.h"

#include <chrono>
#include <unistd.h>

namespace nicer::daemon {

Result<std::unique_ptr<WorkSlice>> WorkSlice::create(const DaemonConfig& config, sd_event* event) {
    auto units = usermanager::SystemdUnitManager::connectUser();
    if (!units) {
        return units.error();
    }
    // The loop takes systemd's answers to the quota written every period, which it does not wait for.
    if (auto attached = (*units)->attach(event); !attached) {
        return attached.error();
    }
    auto layout = kernel::CgroupLayout::detect();
    if (!layout) {
        return layout.error();
    }
    auto slice = std::unique_ptr<WorkSlice>(new WorkSlice(config, event, std::move(*layout)));
    slice->m_userUnits = std::move(*units);
    slice->m_units = slice->m_userUnits.get();
    if (auto placed = slice->choosePlacement(); !placed) {
        return placed.error();
    }
    if (auto selected = slice->selectActuator(); !selected) {
        return selected.error();
    }
    slice->applyMemoryLimit();
    return slice;
}

WorkSlice::~WorkSlice() {
    release();
    m_actuator.reset();
    if (m_sliceStarted && m_units) {
        (void)m_units->stopUnit(m_config.slice, true);
    }
    // In the root idle slice: the link closes, and the work host ends with its unit.
    m_units = m_userUnits.get();
    m_rootUnits.reset();
}

void WorkSlice::release() {
    if (m_actuator) {
        (void)m_actuator->release();
    }
}

Result<void> WorkSlice::choosePlacement() {
    const auto want = m_config.placement;
    if (want == api::Placement::UserSlice) {
        m_placementNote = "in your user manager's slice, as asked (--placement user-slice)";
        return {};
    }
    std::string why;
    if (!m_config.adopt.empty()) {
        why = "the processes given to --adopt run in the user manager, and none can move to the root idle "
              "slice";
    } else if (!m_layout.cpuOnUnified()) {
        why = "the cpu controller is on a cgroup v1 hierarchy here, and the root idle slice needs cgroup v2";
    } else {
        // The host's hello and its answer to each start are waited for as long as a systemd job (30 s): a
        // start execs in the leaf under the slice's least quota until the first period, beside work that
        // may already use all of it (in the guest, under emulation, 10 s were not always enough).
        auto root =
            workhost::WorkHostUnits::connect(*m_userUnits, {m_config.slice, workload::kWorkUnitPrefix},
                                             std::chrono::seconds(30), workhost::workHostSocket(::getuid()));
        if (root) {
            m_rootUnits = std::move(*root);
            m_units = m_rootUnits.get();
            m_placementNote = "in " + std::string(workhost::kIdleSlice) + " (" + m_rootUnits->systemUnit() +
                              "), directly under the root cgroup; setuid helpers (VirtualBox's, for some "
                              "BOINC apps) cannot run there: placement = user-slice runs them";
            log::notice() << "nicerd: the work runs " << m_placementNote;
            return {};
        }
        why = root.error().message;
    }
    if (want == api::Placement::RootSlice) {
        return Error{"the work cannot run in the root idle slice (--placement root-slice): " + why};
    }
    m_placementNote =
        "in your user manager's slice: " + why +
        ". Your desktop is protected at once only where it runs as units of your user manager "
        "(GNOME, Plasma); a session kept outside it (Cinnamon, XFCE, MATE, LXQt), system services "
        "and other users are protected by nicer's quota alone. Installing nicer's .deb protects "
        "them all.";
    log::warning() << "nicerd: the work runs " << m_placementNote;
    return {};
}

Result<void> WorkSlice::followPeriod(std::chrono::milliseconds period) {
    if (m_config.sliceOptions.quotaPeriod || !m_actuator->bandwidthWindow()) {
        return {};
    }
    return m_actuator->setBandwidthWindow(actuator::windowForPeriod(period));
}

Result<void> WorkSlice::selectActuator() {
    using api::Actuator;
    const auto choice = m_config.actuator; // nullopt: auto
    std::string whySliceFailed;
    if (!choice || choice == Actuator::SystemdSlice) {
        // Unless set, the bandwidth window follows the period, so that every tick can start a window.
        auto options = m_config.sliceOptions;
        if (!options.quotaPeriod) {
            options.quotaPeriod = actuator::windowForPeriod(m_config.params.period);
        }
        auto slice = actuator::SystemdSliceActuator::create(*m_units, m_layout, m_config.slice, options);
        if (slice) {
            m_actuator = std::move(*slice);
            m_sliceStarted = true;
            return {};
        }
        if (choice) {
            return slice.error();
        }
        whySliceFailed = slice.error().message;
    }
    // The duty cycle still groups the work in the slice, for its process list and CPU time.
    if (auto state = m_units->activeState(m_config.slice);
        !state || *state != usermanager::UnitState::Active) {
        auto started = m_units->startTransientUnit(
            m_config.slice, {{"Description", std::string("nicer: volunteer work")}, {"CPUAccounting", true}},
            true);
        if (!started) {
            return started;
        }
    }
    m_sliceStarted = true;
    auto cgroup = m_units->controlGroup(m_config.slice);
    if (!cgroup) {
        return cgroup.error();
    }
    std::optional<actuator::DutyCycleMethod> method;
    if (choice == Actuator::FreezerDutyCycle) {
        method = actuator::DutyCycleMethod::Freezer;
    } else if (choice == Actuator::SignalDutyCycle) {
        method = actuator::DutyCycleMethod::Signal;
    }
    auto duty = createDutyCycle(*cgroup, method);
    if (!duty) {
        return Error{duty.error().message + (whySliceFailed.empty() ? "" : " (and " + whySliceFailed + ")")};
    }
    m_actuator = std::move(*duty);
    m_actuatorNote =
        whySliceFailed.empty()
            ? actuator::dutyCycleChosenNote(m_actuator->kind())
            : actuator::dutyCycleFallbackNote(m_layout, *cgroup, m_actuator->kind(), whySliceFailed);
    log::notice() << "nicerd: " << m_actuatorNote;
    return {};
}

void WorkSlice::applyMemoryLimit() {
    const auto& c = m_config;
    auto total = kernel::machineMemoryBytes(c.procMeminfo);
    if (!total && c.memoryMaxPercent < 100.0) {
        m_memoryNote = "nicer cannot tell the machine's memory size (" + total.error().message +
                       "), so the work runs without a memory limit.";
        log::warning() << "nicerd: " << m_memoryNote;
        return;
    }
    // Without a limit (memory-max none) one an earlier run left is lifted all the same; the profiles' memory
    // shares need the machine's size.
    m_totalMemory = total ? *total : 0;
    // The machine's swap, for the work's share of it: without /proc/meminfo's SwapTotal, no swap limit.
    const auto swap = kernel::swapBytes(c.procMeminfo);
    m_fence = total ? actuator::memoryLimitFor(*total, c.memoryMaxPercent, swap ? *swap : 0)
                    : actuator::MemoryLimit{};
    auto cgroup = m_units->controlGroup(c.slice);
    const auto outcome =
        actuator::applyMemoryLimit(*m_units, m_layout, c.slice, cgroup ? *cgroup : std::string(), m_fence);
    m_memoryMaxBytes = outcome.maxInForce == actuator::kNoMemoryLimit ? 0 : outcome.maxInForce;
    m_memoryHigh = m_fence.high;
    m_memoryEnforced = !cgroup || cgroup->empty() || m_layout.memoryControllerAvailable(*cgroup);
    m_memoryNote = outcome.note;
    if (!m_memoryNote.empty()) {
        log::warning() << "nicerd: " << m_memoryNote;
    } else if (m_fence.swapMax != actuator::kNoMemoryLimit) {
        log::info() << "nicerd: the work may put at most "
                    << text::humanBytes(static_cast<double>(m_fence.swapMax)) << " in swap, "
                    << c.memoryMaxPercent << "% of the machine's "
                    << text::humanBytes(static_cast<double>(*swap));
    }
}

std::uint64_t WorkSlice::memoryCeiling(double share) const {
    if (m_totalMemory == 0) {
        return 0;
    }
    const auto high = actuator::memoryHighFor(m_totalMemory, m_fence, share);
    return high == actuator::kNoMemoryLimit ? m_totalMemory : high;
}

std::string WorkSlice::cgroup() const {
    auto cgroup = m_units->controlGroup(m_config.slice);
    return cgroup ? *cgroup : std::string();
}

void WorkSlice::followMemoryShare(double share, std::uint64_t ruleLimit) {
    // Without the machine's size, or where the kernel does not enforce the fence, MemoryHigh would hold
    // nothing either: the fence's note says why.
    if (m_totalMemory == 0 || !m_memoryNote.empty()) {
        return;
    }
    auto high = actuator::memoryHighFor(m_totalMemory, m_fence, share);
    if (ruleLimit > 0) {
        high = std::min(high, ruleLimit);
    }
    if (m_memoryEnforced) {
        // The answer to the last write. Written without waiting: in the user slice the manager shares the
        // memory under pressure, and the guest saw it answer only after D-Bus's 25 s, the loop held as long.
        const auto writes = m_units->takePropertyWrites(m_config.slice, "MemoryHigh");
        if (!writes.failure) {
            auto note = "the work's memory for this profile (" +
                        (m_memoryHigh == actuator::kNoMemoryLimit
                             ? std::string("no limit")
                             : text::humanBytes(static_cast<double>(m_memoryHigh))) +
                        ") is not in force: " + writes.failure.error().message;
            if (note != m_memoryHighNote) { // once, not each period it is asked again
                log::warning() << "nicerd: " << note;
            }
            m_memoryHighNote = std::move(note);
            m_memoryHigh = 0; // asked again now: a manager that timed out may answer the next one
        } else if (!writes.pending) {
            m_memoryHighNote.clear();
        }
    }
    if (high == m_memoryHigh) {
        return;
    }
    m_memoryHigh = high;
    if (!m_memoryEnforced) { // memory-max none, so no fence's note says it
        m_memoryHighNote = "the work's memory for this profile is not in force: the memory controller is not "
                           "delegated to " +
                           m_config.slice;
        return;
    }
    m_units->setUnitPropertiesAsync(m_config.slice, {{"MemoryHigh", high}});
}

std::string WorkSlice::actuatorNote() const {
    std::string note = m_actuatorNote.empty() && m_actuator ? m_actuator->note() : m_actuatorNote;
    if (!m_memoryNote.empty()) {
        note += (note.empty() ? "" : " ") + m_memoryNote;
    }
    if (!m_memoryHighNote.empty()) {
        note += (note.empty() ? "" : " ") + m_memoryHighNote + ".";
    }
    return note;
}

void WorkSlice::describe(api::DaemonState& state) const {
    state.actuator = m_actuator->kind();
    state.actuatorNote = actuatorNote();
    state.placement = placement();
    state.placementNote = m_placementNote;
    state.memoryMaxPercent = m_config.memoryMaxPercent;
    state.memoryMax = m_memoryMaxBytes;
    const bool highInForce = m_totalMemory > 0 && m_memoryNote.empty() && m_memoryHighNote.empty();
    state.memoryHigh = highInForce && m_memoryHigh != actuator::kNoMemoryLimit ? m_memoryHigh : 0;
}

std::unique_ptr<UserManagerBoundary> WorkSlice::userManagerBoundary(control::Signal signal) const {
    auto manager = m_units->managerControlGroup();
    auto slice = m_units->controlGroup(m_config.slice);
    std::string why;
    if (!manager || manager->empty()) {
        why = manager ? "the user manager names no cgroup of its own" : manager.error().message;
    } else if (!slice || slice->empty()) {
        why = slice ? "the work's slice has no cgroup" : slice.error().message;
    } else if (auto usage = m_layout.readCpuUsageNSec(*manager); !usage) {
        why = usage.error().message;
    } else {
        return std::make_unique<CgroupBoundary>(m_layout, *manager, *slice);
    }
    if (signal != control::Signal::Machine) {
        log::warning()
            << "nicerd: the controller answers the whole machine's idle time: cannot tell your programs "
               "from other users and services ("
            << why << ")";
    }
    return nullptr;
}

std::function<std::vector<pid_t>()> WorkSlice::workPids() const {
    auto cgroup = m_units->controlGroup(m_config.slice);
    if (!cgroup || cgroup->empty()) {
        return nullptr;
    }
    return [layout = m_layout, cgroup = *cgroup] {
        auto pids = layout.readPids(cgroup);
        return pids ? *pids : std::vector<pid_t>{};
    };
}

Result<std::unique_ptr<actuator::QuotaActuator>> WorkSlice::dutyCycleFallback() {
    auto cgroup = m_units->controlGroup(m_config.slice);
    if (!cgroup) {
        return cgroup.error();
    }
    return createDutyCycle(*cgroup, std::nullopt);
}

std::unique_ptr<actuator::QuotaActuator>
WorkSlice::replaceActuator(std::unique_ptr<actuator::QuotaActuator> fallback, std::string note) {
    auto old = std::move(m_actuator);
    m_actuator = std::move(fallback);
    m_actuatorNote = std::move(note);
    return old;
}

Result<std::unique_ptr<actuator::QuotaActuator>>
WorkSlice::createDutyCycle(const std::string& cgroup, std::optional<actuator::DutyCycleMethod> method) {
    // systemd keeps the quota a systemd-slice run set (a runtime drop-in that outlives the slice) and applies
    // it to this slice too: lifted here, or the duty cycle would run under an old, possibly tiny, cap.
    if (auto lifted =
            m_units->setUnitProperties(m_config.slice, {{"CPUQuotaPerSecUSec", actuator::kNoCpuQuota}});
        !lifted) {
        return Error{"cannot lift the CPU quota an earlier run left on " + m_config.slice + ": " +
                     lifted.error().message};
    }
    auto duty = actuator::DutyCycleActuator::create(
        m_event, m_layout, cgroup, method.value_or(actuator::dutyCycleMethodFor(m_layout, cgroup)),
        std::chrono::milliseconds(100));
    if (!duty) {
        return duty.error();
    }
    return std::unique_ptr<actuator::QuotaActuator>(std::move(*duty));
}

} // namespace nicer::daemon
