#include "daemon/Daemon.h"

#include "actuator/ActuatorNote.h"
#include "actuator/BandwidthWindows.h"
#include "actuator/DutyCycleActuator.h"
#include "actuator/SliceMemoryLimit.h"
#include "actuator/SystemdSliceActuator.h"
#include "api/Placement.h"
#include "boinc/ClientDirectory.h"
#include "boinc/SystemService.h"
#include "control/ParameterText.h"
#include "kernel/MemInfo.h"
#include "util/TextFile.h"
#include "workload/BoincCommand.h"
#include "workload/PresetFile.h"

#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <unistd.h>

namespace nicer::daemon {

Result<std::unique_ptr<Daemon>> Daemon::create(DaemonConfig config, PublishDaemon publish) {
    auto daemon = std::unique_ptr<Daemon>(new Daemon(std::move(config), std::move(publish)));
    if (auto started = daemon->start(); !started) {
        daemon->shutdown();
        return started.error();
    }
    return daemon;
}

Daemon::~Daemon() {
    shutdown();
}

Result<void> Daemon::start() {
    auto& c = m_config;

    // Parameters kept from an earlier run win over the config file's; a bad file stops the start rather than
    // silently running with other values.
    if (std::error_code ec; std::filesystem::exists(c.parameterFile, ec)) {
        auto text = readTextFile(c.parameterFile);
        if (!text) {
            return text.error();
        }
        auto saved = control::readSavedParameterFile(*text, c.parameterFile.string(), c.params);
        if (!saved) {
            return Error{saved.error().message +
                         " (fix or delete the file; it holds parameters set at run time)"};
        }
        c.params = *saved;
    }
    if (auto valid = control::validate(c.params); !valid) {
        return valid.error();
    }
    auto workload = startupWorkload();
    if (!workload) {
        return workload.error();
    }

    sd_event* event = nullptr;
    if (int r = sd_event_new(&event); r < 0) {
        return libsystemd::busError("cannot create the event loop", r);
    }
    m_event.reset(event);
    // The name first: a second daemon stops here, before it touches any unit.
    if (auto connected = connectBus(); !connected) {
        return connected;
    }

    if (!c.downloads.files.empty()) {
        if (c.downloads.dir.empty()) {
            c.downloads.dir = defaultDownloadDir(c.dataDir, workload->preset);
        }
        auto downloads = DaemonDownloads::create(event, c.downloads);
        if (!downloads) {
            return Error{"the downloads cannot start: " + downloads.error().message};
        }
        m_downloads = std::move(*downloads);
    }

    auto units = usermanager::SystemdUnitManager::connectUser();
    if (!units) {
        return units.error();
    }
    m_userUnits = std::move(*units);
    m_units = m_userUnits.get();
    auto layout = kernel::CgroupLayout::detect();
    if (!layout) {
        return layout.error();
    }
    m_layout = std::move(*layout);
    if (auto placed = choosePlacement(); !placed) {
        return placed;
    }

    auto bindTo = ownUnit();
    if (!bindTo) {
        return bindTo.error();
    }
    if (auto selected = selectActuator(); !selected) {
        return selected;
    }
    applyMemoryLimit();
    if (auto prepared = prepareBoinc(*workload); !prepared) {
        return prepared;
    }
    m_supervisor =
        std::make_unique<workload::WorkloadSupervisor>(*m_units, std::move(*workload), c.slice, *bindTo);
    if (auto started = m_supervisor->start(std::chrono::steady_clock::now(), c.pathVariable); !started) {
        restoreBoinc(m_supervisor->spec());
        return started;
    }
    startBoinc();
    checkSystemService();
    if (!c.adopt.empty()) {
        if (auto adopted = m_supervisor->adopt(c.adopt); !adopted) {
            return adopted;
        }
    }

    const auto capacity = static_cast<std::size_t>(std::max<std::int64_t>(
        1, std::chrono::duration_cast<std::chrono::milliseconds>(c.historySpan).count() /
               c.params.period.count()));
    m_boundary = findBoundary();
    m_loop = std::make_unique<ControlLoop>(cpu::CpuSampler(c.procStat), c.params, *m_actuator, capacity,
                                           c.signal, m_boundary.get());
    if (auto primed = m_loop->prime(); !primed) {
        return primed;
    }
    // Until the first period has measured the machine, the work stays frozen.
    (void)m_actuator->apply(0.0, 1);
    // A pause made before this start (nicerd restarted by an upgrade, a reboot) still holds.
    if (std::error_code ec; !c.pauseFile.empty() && std::filesystem::exists(c.pauseFile, ec)) {
        if (auto paused = m_loop->pause(); !paused) {
            return paused;
        }
        std::cerr << "nicerd: the work stays paused, as it was before nicerd restarted ("
                  << c.pauseFile.string() << "; nicer resume ends the pause)\n";
    }

    auto timer = libsystemd::Timer::create(event, [this] { onTimer(); });
    if (!timer) {
        return Error{"cannot start the period timer: " + timer.error().message};
    }
    m_timer = std::move(*timer);
    m_timer.setErrorHandler([this](std::string_view what) { m_lastError = what; });
    m_timer.armIn(c.params.period);
    auto alignment = WindowAlignment::create(event, *m_actuator, [this](auto start) { alignTicks(start); });
    if (!alignment) {
        return alignment.error();
    }
    m_alignment = std::move(*alignment);
    if (m_actuator->capsByCpuBandwidth()) {
        // The kernel may take a quota it does not enforce (a sched_ext scheduler): checked every period.
        m_enforcement = std::make_unique<EnforcementWatch>(
            c.schedExtDir, [this]() -> Result<std::unique_ptr<actuator::QuotaActuator>> {
                auto cgroup = m_units->controlGroup(m_config.slice);
                if (!cgroup) {
                    return cgroup.error();
                }
                return createDutyCycle(*cgroup, std::nullopt);
            });
    }
    if (const auto window = m_actuator->bandwidthWindow();
        window && !actuator::periodStartsWindows(c.params.period, *window)) {
        std::cerr << "nicerd: the period (" << c.params.period.count() << " ms) is not a whole number of CPU "
                  << "bandwidth windows (" << window->count() / 1000.0 << " ms, --quota-period): the quota "
                  << "changes inside windows, where the kernel refills the work's budget, so the work may "
                  << "get more than its quota\n";
    }
    // After the work, which the downloads feed; they share the loop and never wait on the network.
    if (m_downloads) {
        m_downloads->start();
    }
    sd_notify(0, "READY=1\nSTATUS=Capping the volunteer work to the machine's spare CPU");
    return {};
}

Result<void> Daemon::connectBus() {
    sd_bus* bus = nullptr;
    if (int r = sd_bus_open_user(&bus); r < 0) {
        return libsystemd::busError("cannot connect to the session bus (is a systemd user session running?)",
                                    r);
    }
    libsystemd::BusPtr owned(bus);
    if (int r = sd_bus_attach_event(bus, m_event.get(), SD_EVENT_PRIORITY_NORMAL); r < 0) {
        return libsystemd::busError("cannot attach the session bus to the event loop", r);
    }
    auto observer = m_publish(bus, *this);
    if (!observer) {
        return observer.error();
    }
    m_bus = std::move(owned);
    m_observer = std::move(*observer);
    return {};
}

void Daemon::checkBus() {
    if (m_observer && sd_bus_is_open(m_bus.get()) > 0) {
        return;
    }
    if (m_observer) {
        std::cerr << "nicerd: the session bus closed; the work stays under control, connecting again\n";
        m_observer.reset(); // its object and name went with the old connection
        m_bus.reset();
    }
    if (auto connected = connectBus(); !connected) {
        if (m_busError != connected.error().message) {
            m_busError = connected.error().message;
            std::cerr << "nicerd: not on the session bus yet: " << m_busError << '\n';
        }
        return;
    }
    m_busError.clear();
    std::cerr << "nicerd: back on the session bus\n";
}

Result<workload::WorkloadSpec> Daemon::startupWorkload() {
    const auto& c = m_config;
    m_chooser =
        std::make_unique<workload::WorkloadChooser>(c.command, c.instances, c.dataDir, c.pathVariable);
    const bool hasCommand = !c.command.empty();
    // The workload chosen at run time counts only where none is given explicitly, so a bad file is no
    // obstacle then; otherwise it stops the start rather than silently running something else.
    std::optional<std::string> persisted;
    if (std::error_code ec;
        c.workloadPreset.empty() && !hasCommand && std::filesystem::exists(c.workloadFile, ec)) {
        auto text = readTextFile(c.workloadFile);
        if (!text) {
            return text.error();
        }
        auto id = workload::readPresetFile(*text, c.workloadFile.string());
        if (!id) {
            return Error{id.error().message +
                         " (fix or delete the file; it holds the workload chosen at run time)"};
        }
        persisted = *id;
    }
    const auto id = workload::startupPreset(c.workloadPreset, hasCommand, persisted);
    auto spec = m_chooser->resolve(id);
    if (!spec && persisted) {
        return Error{spec.error().message + " (" + id + " was chosen at run time and is kept in " +
                     c.workloadFile.string() + ": delete that file to start with the demo)"};
    }
    return spec;
}

Result<std::string> Daemon::ownUnit() {
    // Under its own service (nicerd.service), the work is bound to that service.
    char* unit = nullptr;
    if (sd_pid_get_user_unit(0, &unit) >= 0 && unit) {
        const std::string name = unit;
        std::free(unit);
        if (name.ends_with(".service")) {
            if (auto pid = m_units->mainPid(name); pid && *pid == static_cast<std::uint32_t>(::getpid())) {
                return name;
            }
        }
    }
    // Otherwise (a terminal, a test) the daemon moves into a scope of its own: the scope ends when the
    // daemon's process does, however it ends, and systemd then stops the work bound to it.
    m_ownScope = "nicerd-" + std::to_string(::getpid()) + ".scope";
    auto started = m_units->startTransientUnit(
        m_ownScope,
        {{"Description", std::string("nicer daemon (started outside its service)")},
         {"PIDs", std::vector<std::uint32_t>{static_cast<std::uint32_t>(::getpid())}},
         {"CollectMode", std::string("inactive-or-failed")}},
        true);
    if (!started) {
        return Error{"cannot give nicerd a scope of its own, which keeps the work from outliving it: " +
                     started.error().message + ". Start nicerd as the nicerd.service user unit instead."};
    }
    return m_ownScope;
}

std::unique_ptr<UserManagerBoundary> Daemon::findBoundary() {
    auto manager = m_units->managerControlGroup();
    auto slice = m_units->controlGroup(m_config.slice);
    std::string why;
    if (!manager || manager->empty()) {
        why = manager ? "the user manager names no cgroup of its own" : manager.error().message;
    } else if (!slice || slice->empty()) {
        why = slice ? "the work's slice has no cgroup" : slice.error().message;
    } else if (auto usage = m_layout->readCpuUsageNSec(*manager); !usage) {
        why = usage.error().message;
    } else {
        return std::make_unique<CgroupBoundary>(*m_layout, *manager, *slice);
    }
    if (m_config.signal != control::Signal::Machine) {
        std::cerr
            << "nicerd: the controller answers the whole machine's idle time: cannot tell your programs "
               "from other users and services ("
            << why << ")\n";
    }
    return nullptr;
}

Result<void> Daemon::choosePlacement() {
    const auto& want = m_config.placement;
    if (want == "user-slice") {
        m_placementNote = "in your user manager's slice, as asked (--placement user-slice)";
        return {};
    }
    std::string why;
    if (!m_config.adopt.empty()) {
        why = "the processes given to --adopt run in the user manager, and none can move to the root idle "
              "slice";
    } else if (!m_layout->cpuOnUnified()) {
        why = "the cpu controller is on a cgroup v1 hierarchy here, and the root idle slice needs cgroup v2";
    } else if (auto system = usermanager::SystemdUnitManager::connectSystem(); !system) {
        why = system.error().message;
    } else {
        auto root = workhost::WorkHostUnits::connect(*m_userUnits, std::move(*system),
                                                     {m_config.slice, workload::kWorkUnitPrefix},
                                                     std::chrono::seconds(10));
        if (root) {
            m_rootUnits = std::move(*root);
            m_units = m_rootUnits.get();
            m_placementNote = "in " + std::string(workhost::kIdleSlice) + " (" + m_rootUnits->systemUnit() +
                              "), directly under the root cgroup";
            std::cerr << "nicerd: the work runs " << m_placementNote << '\n';
            return {};
        }
        why = root.error().message;
    }
    if (want == "root-slice") {
        return Error{"the work cannot run in the root idle slice (--placement root-slice): " + why};
    }
    m_placementNote =
        "in your user manager's slice: " + why +
        ". Your desktop is protected at once only where it runs as units of your user manager "
        "(GNOME, Plasma); a session kept outside it (Cinnamon, XFCE, MATE, LXQt), system services "
        "and other users are protected by nicer's quota alone. Installing nicer's .deb protects "
        "them all.";
    std::cerr << "nicerd: the work runs " << m_placementNote << '\n';
    return {};
}

Result<void> Daemon::selectActuator() {
    const auto& choice = m_config.actuator;
    std::string whySliceFailed;
    if (choice == "auto" || choice == "systemd-slice") {
        // Unless set, the bandwidth window follows the period, so that every tick can start a window.
        auto options = m_config.sliceOptions;
        if (!options.quotaPeriod) {
            options.quotaPeriod = actuator::windowForPeriod(m_config.params.period);
        }
        auto slice = actuator::SystemdSliceActuator::create(*m_units, *m_layout, m_config.slice, options);
        if (slice) {
            m_actuator = std::move(*slice);
            m_sliceStarted = true;
            return {};
        }
        if (choice == "systemd-slice") {
            return slice.error();
        }
        whySliceFailed = slice.error().message;
    }
    if (choice != "auto" && choice != "freezer-duty-cycle" && choice != "signal-duty-cycle") {
        return Error{"actuator = '" + choice +
                     "' is unknown: use auto, systemd-slice, freezer-duty-cycle or signal-duty-cycle"};
    }
    // The duty cycle still groups the work in the slice, for its process list and CPU time.
    if (auto state = m_units->activeState(m_config.slice); !state || *state != "active") {
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
    if (choice == "freezer-duty-cycle") {
        method = actuator::DutyCycleMethod::Freezer;
    } else if (choice == "signal-duty-cycle") {
        method = actuator::DutyCycleMethod::Signal;
    }
    auto duty = createDutyCycle(*cgroup, method);
    if (!duty) {
        return Error{duty.error().message + (whySliceFailed.empty() ? "" : " (and " + whySliceFailed + ")")};
    }
    m_actuator = std::move(*duty);
    m_actuatorNote =
        whySliceFailed.empty()
            ? actuator::dutyCycleChosenNote(m_actuator->name())
            : actuator::dutyCycleFallbackNote(*m_layout, *cgroup, m_actuator->name(), whySliceFailed);
    std::cerr << "nicerd: " << m_actuatorNote << '\n';
    return {};
}

void Daemon::applyMemoryLimit() {
    const auto& c = m_config;
    actuator::MemoryLimit limit; // none
    if (c.memoryMaxPercent < 100.0) {
        auto total = kernel::machineMemoryBytes(c.procMeminfo);
        if (!total) {
            m_memoryNote = "nicer cannot tell the machine's memory size (" + total.error().message +
                           "), so the work runs without a memory limit.";
            std::cerr << "nicerd: " << m_memoryNote << '\n';
            return;
        }
        limit = actuator::memoryLimitFor(*total, c.memoryMaxPercent);
    }
    auto cgroup = m_units->controlGroup(c.slice);
    const auto outcome =
        actuator::applyMemoryLimit(*m_units, *m_layout, c.slice, cgroup ? *cgroup : std::string(), limit);
    m_memoryMaxBytes = outcome.maxInForce == actuator::kNoMemoryLimit ? 0 : outcome.maxInForce;
    m_memoryNote = outcome.note;
    if (!m_memoryNote.empty()) {
        std::cerr << "nicerd: " << m_memoryNote << '\n';
    }
}

std::string Daemon::actuatorNote() const {
    std::string note = m_actuatorNote.empty() && m_actuator ? m_actuator->note() : m_actuatorNote;
    if (!m_memoryNote.empty()) {
        note += (note.empty() ? "" : " ") + m_memoryNote;
    }
    return note;
}

Result<std::unique_ptr<actuator::QuotaActuator>>
Daemon::createDutyCycle(const std::string& cgroup, std::optional<actuator::DutyCycleMethod> method) {
    // systemd keeps the quota a systemd-slice run set (a runtime drop-in that outlives the slice) and applies
    // it to this slice too: lifted here, or the duty cycle would run under an old, possibly tiny, cap.
    if (auto lifted =
            m_units->setUnitProperties(m_config.slice, {{"CPUQuotaPerSecUSec", actuator::kNoCpuQuota}});
        !lifted) {
        return Error{"cannot lift the CPU quota an earlier run left on " + m_config.slice + ": " +
                     lifted.error().message};
    }
    auto duty = actuator::DutyCycleActuator::create(
        m_event.get(), *m_layout, cgroup, method.value_or(actuator::dutyCycleMethodFor(*m_layout, cgroup)),
        std::chrono::milliseconds(100));
    if (!duty) {
        return duty.error();
    }
    return std::unique_ptr<actuator::QuotaActuator>(std::move(*duty));
}

int Daemon::run() {
    const int r = sd_event_loop(m_event.get());
    if (r < 0) {
        std::cerr << "nicerd: the event loop failed: " << libsystemd::busErrorText(r, nullptr)
                  << "; stopping the work\n";
    }
    shutdown();
    return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

void Daemon::shutdown() {
    if (m_shutDown) {
        return;
    }
    m_shutDown = true;
    m_timer = libsystemd::Timer();
    m_alignment.reset();
    if (m_downloads) {
        m_downloads->stop(); // part files stay for the next start
    }
    // Thaw first: a frozen process cannot act on the stop signal.
    if (m_actuator) {
        (void)m_actuator->release();
    }
    m_boinc.reset();
    if (m_supervisor) {
        if (m_supervisor->stop()) {
            restoreBoinc(m_supervisor->spec());
        }
    }
    m_actuator.reset();
    if (m_sliceStarted && m_units) {
        (void)m_units->stopUnit(m_config.slice, true);
    }
    // In the root idle slice: the link closes, and the work host ends with its unit.
    m_units = m_userUnits.get();
    m_rootUnits.reset();
    m_observer.reset();
    if (m_bus) {
        sd_bus_flush(m_bus.get());
    }
}

void Daemon::onTimer() {
    // A fixed schedule: the next period starts one period after this one was due, not after the work done.
    // Armed before the tick, so that a tick that throws does not end the schedule.
    const libsystemd::Timer::Time period = m_loop->params().period;
    libsystemd::Timer::Time next = m_timer.due() + period;
    if (next <= m_timer.now()) {
        next = m_timer.now() + period; // fell behind (suspend, overload): skip rather than burst
        if (m_alignment) {
            m_alignment->reset(); // and off the kernel's window starts: find them again
        }
    }
    m_timer.armAt(next);
    onTick();
}

void Daemon::switchActuator(EnforcementWatch::Fallback fallback) {
    std::cerr << "nicerd: " << fallback.note << '\n';
    auto old = std::move(m_actuator);
    m_actuator = std::move(fallback.actuator);
    m_actuatorNote = std::move(fallback.note);
    m_enforcement.reset();
    if (auto handed = m_loop->setActuator(*m_actuator); !handed) {
        m_lastError = "the duty cycle that replaces the slice's quota: " + handed.error().message;
    }
    // The alignment follows the old actuator's windows; the duty cycle has none.
    auto alignment =
        WindowAlignment::create(m_event.get(), *m_actuator, [this](auto start) { alignTicks(start); });
    m_alignment = alignment ? std::move(*alignment) : nullptr;
    (void)old->release(); // the duty cycle holds the work from its first slot
    if (m_observer) {
        m_observer->onStateChanged();
    }
}

void Daemon::alignTicks(libsystemd::Timer::Time windowStart) {
    // The period is a whole number of windows, so the window start nearest to the next tick serves, and the
    // fixed schedule keeps every later tick on a window start too.
    const auto window = *m_actuator->bandwidthWindow();
    auto next = actuator::nearestWindowStart(windowStart, window, m_timer.due());
    while (next <= m_timer.now()) {
        next += window;
    }
    m_timer.armAt(next);
}

void Daemon::onTick() {
    // Samples are stamped with the wall clock, in microseconds since the epoch, as they travel on D-Bus.
    const auto wall = std::chrono::system_clock::now().time_since_epoch();
    auto sample = m_loop->tick(
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(wall).count()));
    if (m_boinc && m_loop->last()) {
        const bool held = m_loop->last()->paused || m_loop->last()->quota <= 0.0;
        m_boinc->setHeld(held, m_loop->last()->paused ? "paused: nicer holds the work until you resume it"
                               : m_loop->last()->outsideSignal
                                   ? "held: other users and services need every CPU, nicer holds the work"
                                   : "held: your programs need every CPU, nicer holds the work");
    }
    checkBus();
    if (sample && m_enforcement) {
        if (auto fallback = m_enforcement->afterTick(*sample)) {
            if (*fallback) {
                switchActuator(std::move(**fallback));
            } else {
                std::cerr << "nicerd: " << fallback->error().message << '\n';
            }
        }
    }
    if (m_alignment) {
        m_alignment->onTick(m_loop->params().period);
    }
    if (sample) {
        m_lastError.clear();
    } else {
        m_lastError = sample.error().message;
    }
    if (m_observer && m_loop->last()) {
        m_observer->onSample(*m_loop->last());
    }
    if (auto polled = m_supervisor->poll(std::chrono::steady_clock::now()); !polled) {
        m_lastError = "workload: " + polled.error().message;
    }
    // Whether the system-wide BOINC client is enabled changes rarely: a look every 30 periods.
    if (++m_ticks % 30 == 0) {
        checkSystemService();
    }
}

Result<void> Daemon::setParams(const control::ControllerParams& params) {
    if (auto valid = control::validate(params); !valid) {
        return valid;
    }
    const bool periodChanged = params.period != m_loop->params().period;
    // Unless --quota-period set it, the bandwidth window follows the period: changed first, so that a window
    // systemd refuses changes nothing, and put back if the parameters cannot be saved.
    const auto oldWindow = m_actuator ? m_actuator->bandwidthWindow() : std::nullopt;
    const bool windowFollows = periodChanged && oldWindow && !m_config.sliceOptions.quotaPeriod;
    if (windowFollows) {
        if (auto set = m_actuator->setBandwidthWindow(actuator::windowForPeriod(params.period)); !set) {
            return Error{"the parameters were not changed: " + set.error().message};
        }
    }
    // Saved before they apply, so that a parameter the daemon runs with is never lost at the next start.
    if (auto saved = writeFileAtomically(m_config.parameterFile, control::writeParameterFile(params));
        !saved) {
        if (windowFollows) {
            (void)m_actuator->setBandwidthWindow(*oldWindow);
        }
        return Error{"the parameters were not changed: " + saved.error().message};
    }
    m_loop->setParams(params);
    if (periodChanged && m_timer) {
        // The next tick was armed with the old period: re-arm it, or a shorter period would wait for it. The
        // ticks are off the kernel's window starts then, until they are found again.
        m_timer.armIn(params.period);
        m_alignment->reset();
    }
    return {};
}

Result<void> Daemon::setWorkloadPreset(const std::string& id) {
    // Resolved first: an unknown id or a program that is not installed changes nothing.
    auto spec = m_chooser->resolve(id);
    if (!spec) {
        return spec.error();
    }
    const std::string previous = m_supervisor->spec().preset;
    // A BOINC client gets nicer's preferences before it starts; a volunteer's override that cannot be read
    // stops the switch here, with nothing changed. (The same choice again restarts nothing: a preset's
    // command may differ in a detail chosen at each resolve, such as the BOINC client's free port.)
    if (spec->preset != previous) {
        if (auto prepared = prepareBoinc(*spec); !prepared) {
            return prepared;
        }
    }
    // Saved first, like the parameters, so that the work nicerd runs is the work it starts with next time.
    if (auto saved = writeFileAtomically(m_config.workloadFile, workload::writePresetFile(id)); !saved) {
        return Error{"the workload was not changed: " + saved.error().message};
    }
    if (spec->preset == previous) {
        return {};
    }
    // Thawed first: a frozen process cannot act on the stop signal.
    (void)m_actuator->release();
    const workload::WorkloadSpec before = m_supervisor->spec();
    const workload::WorkloadSpec after = *spec;
    m_boinc.reset();
    auto switched =
        m_supervisor->switchTo(std::move(*spec), std::chrono::steady_clock::now(), m_chooser->pathVariable());
    // The BOINC client that no longer runs gets the volunteer's override back: the old one after a switch,
    // the new one when it did not start (the old work runs again).
    restoreBoinc(switched ? before : after, &m_supervisor->spec());
    startBoinc();
    if (!switched) {
        (void)writeFileAtomically(m_config.workloadFile, workload::writePresetFile(previous));
    }
    // Whichever work runs now starts from the controller's initial state, frozen until the next period.
    auto restarted = m_loop->restart();
    if (!switched) {
        return switched;
    }
    if (!restarted) {
        return Error{"the workload was changed, but the new work could not be frozen until the next period "
                     "measures it: " +
                     restarted.error().message};
    }
    return {};
}

api::DaemonState Daemon::state() const {
    api::DaemonState s;
    s.signalSetting = control::signalName(m_config.signal);
    if (m_loop) {
        s.params = m_loop->params();
        s.paused = m_loop->paused();
        s.multiplier = m_loop->state().multiplier;
        s.overloadCount = static_cast<std::uint32_t>(m_loop->state().overloadCount);
        s.cpuCount = static_cast<std::uint32_t>(m_loop->cpuCount());
        if (const auto& last = m_loop->last()) {
            s.quota = last->quota;
            s.idle = last->idle;
            s.foreground = last->foreground;
            s.background = last->background;
            s.outside = last->outside;
            s.signal = control::signalName(last->outsideSignal ? control::Signal::Outside
                                                               : control::Signal::Machine);
        }
    } else {
        s.params = m_config.params;
    }
    s.lastError = m_lastError;
    s.actuator = m_actuator ? m_actuator->name() : std::string();
    s.actuatorNote = actuatorNote();
    s.placement = api::placementName(m_rootUnits ? api::Placement::RootSlice : api::Placement::UserSlice);
    s.placementNote = m_placementNote;
    s.memoryMaxPercent = m_config.memoryMaxPercent;
    s.memoryMax = m_memoryMaxBytes;
    if (m_supervisor) {
        const auto& spec = m_supervisor->spec();
        s.workload = spec.argv;
        s.demoWorkload = spec.demo;
        s.instances = static_cast<std::uint32_t>(spec.instances);
        s.workloadPreset = spec.preset;
    }
    if (m_chooser) {
        s.workloadPresets = m_chooser->choices();
    }
    if (m_downloads) {
        s.downloads = m_downloads->entries();
        s.downloadRate = m_downloads->rate();
        const auto mode = m_downloads->bandwidthMode();
        s.bandwidthMode = api::bandwidthKindKeyword(mode.kind);
        s.bandwidthCap = mode.capBytesPerSecond.value_or(0);
    }
    s.boinc = boincStatus();
    return s;
}

std::filesystem::path Daemon::downloadDir() const {
    return m_downloads ? m_downloads->dir() : std::filesystem::path();
}

namespace {

/// Where @p spec's BOINC client keeps its state, when it runs one that nicer can govern.
std::optional<std::filesystem::path> boincDirOf(const workload::WorkloadSpec& spec) {
    auto client = workload::boincClientOf(spec.argv);
    return client && *client ? std::optional((*client)->dir) : std::nullopt;
}

constexpr const char* kNoBoincClient = "no BOINC client runs under nicerd: choose the boinc workload first";

} // namespace

Result<void> Daemon::prepareBoinc(const workload::WorkloadSpec& spec) {
    const auto dir = boincDirOf(spec);
    if (!dir) {
        return {};
    }
    if (auto prepared = boinc::prepareClientDirectory(*dir); !prepared) {
        return Error{"the BOINC client cannot start under nicer: " + prepared.error().message};
    }
    return {};
}

void Daemon::startBoinc() {
    m_boinc.reset();
    m_boincError.clear();
    auto client = workload::boincClientOf(m_supervisor->spec().argv);
    if (!client) {
        // A custom command that runs BOINC in a way nicer cannot follow: it runs, ungoverned, and says so.
        m_boincError = client.error().message;
    } else if (*client) {
        BoincSession::Options options;
        options.client = **client;
        // The work's processes, the client among them: looked up in the slice's cgroup at each poll.
        if (auto cgroup = m_units->controlGroup(m_config.slice); cgroup && !cgroup->empty()) {
            options.clientPids = [layout = *m_layout, cgroup = *cgroup] {
                auto pids = layout.readPids(cgroup);
                return pids ? *pids : std::vector<pid_t>{};
            };
        }
        auto session = BoincSession::start(m_event.get(), std::move(options), [this] {
            if (m_observer) {
                m_observer->onStateChanged();
            }
        });
        if (session) {
            m_boinc = std::move(*session);
        } else {
            m_boincError = session.error().message;
        }
    }
    if (m_observer) {
        m_observer->onStateChanged();
    }
}

void Daemon::restoreBoinc(const workload::WorkloadSpec& stopped, const workload::WorkloadSpec* running) {
    const auto dir = boincDirOf(stopped);
    if (!dir || (running && boincDirOf(*running) == dir)) {
        return; // no BOINC client, or the one running now uses the same directory
    }
    if (auto restored = boinc::restoreVolunteerOverride(*dir); !restored) {
        m_lastError = "BOINC: " + restored.error().message;
    }
}

void Daemon::checkSystemService() {
    std::string advice = m_systemServiceProbe.advice();
    if (advice != m_systemService) {
        m_systemService = std::move(advice);
        if (m_observer) {
            m_observer->onStateChanged();
        }
    }
}

api::BoincStatus Daemon::boincStatus() const {
    api::BoincStatus status = m_boinc ? m_boinc->status() : api::BoincStatus{};
    if (!m_boinc && !m_boincError.empty()) {
        status.state = "error";
        status.detail = m_boincError;
    }
    status.systemService = m_systemService;
    return status;
}

void Daemon::boincAttach(const std::string& url, const std::string& key, BoincDone done) {
    if (!m_boinc) {
        return done(Error{kNoBoincClient});
    }
    m_boinc->attach(url, key, std::move(done));
}

void Daemon::boincAttachAccountManager(const std::string& url, const std::string& name,
                                       const std::string& password, BoincDone done) {
    if (!m_boinc) {
        return done(Error{kNoBoincClient});
    }
    m_boinc->attachAccountManager(url, name, password, std::move(done));
}

void Daemon::boincDetach(const std::string& url, BoincDone done) {
    if (!m_boinc) {
        return done(Error{kNoBoincClient});
    }
    m_boinc->detach(url, std::move(done));
}

Result<void> Daemon::pause() {
    if (auto paused = m_loop->pause(); !paused) {
        return paused;
    }
    if (m_config.pauseFile.empty()) {
        return {};
    }
    if (auto kept = writeFileAtomically(m_config.pauseFile,
                                        "The volunteer work is paused until `nicer resume`: nicerd starts it "
                                        "paused while this file is here.\n");
        !kept) {
        return Error{"the work is paused, but the pause will not hold if nicerd restarts: " +
                     kept.error().message};
    }
    return {};
}

Result<void> Daemon::resume() {
    m_loop->resume();
    if (std::error_code ec;
        !m_config.pauseFile.empty() && !std::filesystem::remove(m_config.pauseFile, ec) && ec) {
        return Error{"the work runs again, but " + m_config.pauseFile.string() + " could not be removed (" +
                     ec.message() + "): nicerd will start it paused after a restart; delete that file"};
    }
    return {};
}

} // namespace nicer::daemon
