#include "daemon/Daemon.h"

#include "boinc/GlobalPrefsOverride.h"
#include "control/ParameterText.h"
#include "daemon/OwnUnit.h"
#include "daemon/SettingPrecedence.h"
#include "desktop/ProgramList.h"
#include "util/Log.h"
#include "util/TextFile.h"
#include "workhost/WorkHostUnits.h"
#include "workload/PresetFile.h"

#include <systemd/sd-daemon.h>

#include <algorithm>
#include <cstdlib>

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
    auto workload = startupWorkload();
    if (!workload) {
        return workload.error();
    }
    if (auto opened = openLoop(); !opened) {
        return opened;
    }
    if (auto planned = planDownloads(*workload); !planned) {
        return planned;
    }
    auto rules = RuleSources::create(m_event.get(), m_config, [this] { announceStateChange(); });
    if (!rules) {
        return rules.error();
    }
    m_rules = std::move(*rules);
    m_sleep = std::make_unique<SleepPolicy>(m_event.get());
    auto slice = WorkSlice::create(m_config, m_event.get());
    if (!slice) {
        return slice.error();
    }
    m_slice = std::move(*slice);
    // The memory rule reads what waits beside the work's slice (in the root idle slice, beside the whole
    // slice: other users' work is work too); where it has nothing to read, it says so.
    const auto work = m_slice->cgroup();
    const auto besideOf =
        m_slice->placement() == api::Placement::RootSlice ? "/" + std::string(workhost::kIdleSlice) : work;
    auto memory =
        MemoryWatch::create(m_event.get(), m_slice->layout(), work, besideOf, [this] { onMemoryPressure(); });
    if (memory) {
        m_memory = std::move(*memory);
    } else {
        m_memoryNote = "no memory rule: " + memory.error().message;
        log::notice() << "nicerd: " << m_memoryNote;
    }
    if (auto started = startWork(std::move(*workload)); !started) {
        return started;
    }
    if (auto looping = startLoop(); !looping) {
        return looping;
    }
    // After the work, which the downloads feed; they share the loop and never wait on the network.
    if (m_downloads) {
        m_downloads->start(m_config.params.transferHours);
    }
    sd_notify(0, "READY=1\nSTATUS=Capping the volunteer work to the machine's spare CPU");
    return {};
}

Result<void> Daemon::openLoop() {
    sd_event* event = nullptr;
    if (int r = sd_event_new(&event); r < 0) {
        return libsystemd::busError("cannot create the event loop", r);
    }
    m_event.reset(event);
    // The name first: a second daemon stops here, before it touches any unit.
    m_bus = std::make_unique<SessionBusLink>(event, std::move(m_publish), *this);
    return m_bus->connect();
}

Result<void> Daemon::planDownloads(const workload::WorkloadSpec& spec) {
    auto& c = m_config;
    if (c.downloads.files.empty()) {
        return {};
    }
    if (c.downloads.dir.empty()) {
        c.downloads.dir = defaultDownloadDir(c.dataDir, spec.preset);
    }
    auto downloads = DaemonDownloads::create(m_event.get(), c.downloads);
    if (!downloads) {
        return downloads.error().within("the downloads cannot start: ");
    }
    m_downloads = std::move(*downloads);
    return {};
}

Result<void> Daemon::startWork(workload::WorkloadSpec spec) {
    auto bindTo = ownUnit(m_slice->units());
    if (!bindTo) {
        return bindTo.error();
    }
    if (auto prepared = BoincSupervisor::prepare(spec); !prepared) {
        return prepared;
    }
    m_supervisor = std::make_unique<workload::WorkloadSupervisor>(m_slice->units(), std::move(spec),
                                                                  m_config.slice, *bindTo);
    if (auto started = m_supervisor->start(std::chrono::steady_clock::now(), m_config.pathVariable);
        !started) {
        restoreBoinc(m_supervisor->spec());
        return started;
    }
    m_boinc = std::make_unique<BoincSupervisor>(m_event.get(), [this] { announceStateChange(); });
    m_boinc->start(m_supervisor->spec(), m_slice->workPids());
    m_boinc->lookForSystemService();
    if (!m_config.adopt.empty()) {
        return m_supervisor->adopt(m_config.adopt);
    }
    return {};
}

Result<void> Daemon::startLoop() {
    const auto& c = m_config;
    const auto capacity = static_cast<std::size_t>(std::max<std::int64_t>(
        1, std::chrono::duration_cast<std::chrono::milliseconds>(c.historySpan).count() /
               c.params.period.count()));
    auto& actuator = m_slice->actuator();
    m_boundary = m_slice->userManagerBoundary(c.signal);
    m_loop = std::make_unique<ControlLoop>(cpu::CpuSampler(c.procStat), c.params, actuator, capacity,
                                           c.signal, m_boundary.get());
    if (auto primed = m_loop->prime(); !primed) {
        return primed;
    }
    // Until the first period has measured the machine, the work stays frozen.
    (void)actuator.apply(0.0, 1);
    // A pause made before this start (nicerd restarted by an upgrade, a reboot) still holds, till its end.
    m_pause =
        std::make_unique<UserPause>(m_event.get(), *m_loop, c.pauseFile, [this](const Result<void>& resumed) {
            m_lastError = resumed ? std::string() : resumed.error().message;
            announceStateChange();
        });
    if (auto restored = m_pause->restore(std::chrono::system_clock::now()); !restored) {
        return restored;
    }
    auto timer = PeriodTimer::create(
        m_event.get(), actuator, c.params.period, [this] { onTick(); },
        [this](std::string_view what) { m_lastError = what; });
    if (!timer) {
        return timer.error();
    }
    m_timer = std::move(*timer);
    if (actuator.capsByCpuBandwidth()) {
        // The kernel may take a quota it does not enforce (a sched_ext scheduler): checked every period.
        m_enforcement = std::make_unique<EnforcementWatch>(c.schedExtDir,
                                                           [this] { return m_slice->dutyCycleFallback(); });
    }
    return {};
}

Result<workload::WorkloadSpec> Daemon::startupWorkload() {
    const auto& c = m_config;
    if (auto valid = control::validate(c.params); !valid) {
        return valid.error();
    }
    m_chooser =
        std::make_unique<workload::WorkloadChooser>(c.command, c.instances, c.dataDir, c.pathVariable);
    return m_chooser->resolve(workload::startupPreset(c.workloadPreset, !c.command.empty(), std::nullopt));
}

int Daemon::run() {
    const int r = sd_event_loop(m_event.get());
    if (r < 0) {
        log::error() << "nicerd: the event loop failed: " << libsystemd::busErrorText(r, nullptr)
                     << "; stopping the work";
    }
    shutdown();
    return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

void Daemon::shutdown() {
    if (m_shutDown) {
        return;
    }
    m_shutDown = true;
    m_timer.reset();
    m_sleep.reset(); // the machine may sleep as soon as nicerd stops holding the work
    if (m_downloads) {
        m_downloads->stop(); // part files stay for the next start
    }
    // Thaw first: a frozen process cannot act on the stop signal.
    if (m_slice) {
        m_slice->release();
    }
    if (m_boinc) {
        m_boinc->stop();
    }
    if (m_supervisor && m_supervisor->stop()) {
        restoreBoinc(m_supervisor->spec());
    }
    m_slice.reset(); // the slice stops; in the root idle slice, the link closes and the work host ends
    m_bus.reset();
}

void Daemon::onTick() {
    // Samples are stamped with the wall clock, in microseconds since the epoch, as they travel on D-Bus.
    const auto wall = std::chrono::system_clock::now().time_since_epoch();
    auto surroundings = m_rules->read(m_loop->params());
    if (m_memory) {
        surroundings.memory = readMemory(surroundings.presence);
        m_memoryActed = std::chrono::steady_clock::now();
    }
    auto sample = m_loop->tick(
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(wall).count()),
        surroundings);
    if (m_downloads && surroundings.localTime) {
        m_downloads->followHours(m_loop->params().transferHours, *surroundings.localTime);
    }
    if (m_loop->last()) {
        // BOINC runs its tasks itself, in one client: the profile's instances are its CPUs.
        const auto profile = control::profileFor(m_loop->params(), surroundings.presence);
        m_boinc->onPeriod(*m_loop->last(), m_loop->params().boincClock != 0,
                          boinc::maxNcpusPctFor(profile.maxInstances, m_loop->cpuCount()));
        m_sleep->follow(m_loop->params().keepAwake, surroundings.onBattery, *m_loop->last());
        m_rules->publishInputTime(m_loop->params());
        applyMemoryHold(m_loop->memoryHold(), surroundings.presence);
    }
    m_bus->check();
    if (sample && m_enforcement) {
        if (auto fallback = m_enforcement->afterTick(*sample)) {
            if (*fallback) {
                switchActuator(std::move(**fallback));
            } else {
                log::warning() << "nicerd: " << fallback->error().message;
            }
        }
    }
    m_lastError = sample ? std::string() : sample.error().message;
    if (auto* observer = m_bus->observer(); observer && m_loop->last()) {
        observer->onSample(*m_loop->last());
    }
    m_supervisor->limitRunning(control::profileFor(m_loop->params(), surroundings.presence).maxInstances);
    if (auto polled = m_supervisor->poll(std::chrono::steady_clock::now()); !polled) {
        m_lastError = "workload: " + polled.error().message;
    }
}

control::MemoryReading Daemon::readMemory(control::Presence presence) {
    const auto& params = m_loop->params();
    m_memory->setAllowed(params.memoryStall);
    return m_memory->read(m_slice->memoryCeiling(control::profileFor(params, presence).memoryShare),
                          static_cast<int>(m_supervisor->instances().size()));
}

void Daemon::applyMemoryHold(const control::MemoryHold& hold, control::Presence presence) {
    // The reclaim first: it runs on its own thread, while MemoryHigh waits on the manager, which in the user
    // slice shares the memory under pressure (the guest's check saw SetUnitProperties time out there).
    if (m_memory) {
        m_memory->reclaim(hold.reclaimBytes);
    }
    m_slice->followMemoryShare(control::profileFor(m_loop->params(), presence).memoryShare, hold.limitBytes);
    m_supervisor->keepEnded(hold.instancesStopped);
}

void Daemon::onMemoryPressure() {
    // Triggers beside the work may fire together, and the period's own step may have just run: one stall
    // lowers the limit once. Not longer than that (a quarter second, or half a short period): a kernel
    // fires a trigger at most once a window (2 s), and one dropped is a window lost.
    if (!m_memory || !m_loop) {
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - m_memoryActed < std::min(m_loop->params().period / 2, std::chrono::milliseconds(250))) {
        return;
    }
    m_memoryActed = now;
    const auto presence = m_rules->lastPresence();
    const auto reading = readMemory(presence);
    const auto& hold = m_loop->memoryNow(reading);
    // A trigger fires at half the stall allowed: the rule acts only where the reading presses it (over the
    // stall allowed, or short of memory: the stall since the last reading may be less than the window's).
    if (hold.pressed) {
        log::notice() << "nicerd: a PSI trigger woke the memory rule: " << hold.reason;
    }
    applyMemoryHold(hold, presence);
    announceStateChange();
}

void Daemon::switchActuator(EnforcementWatch::Fallback fallback) {
    log::warning() << "nicerd: " << fallback.note;
    auto old = m_slice->replaceActuator(std::move(fallback.actuator), std::move(fallback.note));
    m_enforcement.reset();
    if (auto handed = m_loop->setActuator(m_slice->actuator()); !handed) {
        m_lastError = "the duty cycle that replaces the slice's quota: " + handed.error().message;
    }
    m_timer->setActuator(m_slice->actuator()); // the duty cycle has no windows to follow
    (void)old->release();                      // the duty cycle holds the work from its first slot
    announceStateChange();
}

void Daemon::announceStateChange() {
    if (auto* observer = m_bus->observer()) {
        observer->onStateChanged();
    }
}

Result<void> Daemon::setParams(const control::ControllerParams& params) {
    if (auto valid = control::validate(params); !valid) {
        return valid;
    }
    const auto before = m_loop->params().period;
    const bool periodChanged = params.period != before;
    // The bandwidth window follows the period (WorkSlice::followPeriod): changed first, so that a window
    // systemd refuses changes nothing, and put back if the parameters cannot be saved.
    if (periodChanged) {
        if (auto set = m_slice->followPeriod(params.period); !set) {
            return set.error().within("the parameters were not changed: ");
        }
    }
    // Saved before they apply, so that a parameter set at run time is never lost at the next start; one given
    // on the command line and left as it runs keeps what was kept before (daemon/SettingPrecedence.h).
    const auto kept =
        parametersToKeep(params, m_loop->params(), m_config.keptParams, m_config.commandLineParameters);
    if (auto saved = writeFileAtomically(m_config.parameterFile, control::writeParameterFile(kept)); !saved) {
        if (periodChanged) {
            (void)m_slice->followPeriod(before);
        }
        return saved.error().within("the parameters were not changed: ");
    }
    m_config.keptParams = kept;
    m_loop->setParams(params);
    if (periodChanged) {
        m_timer->setPeriod(params.period);
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
        if (auto prepared = BoincSupervisor::prepare(*spec); !prepared) {
            return prepared;
        }
    }
    // Saved first, like the parameters, so that the work nicerd runs is the work it starts with next time.
    if (auto saved = writeFileAtomically(m_config.workloadFile, workload::writePresetFile(id)); !saved) {
        return saved.error().within("the workload was not changed: ");
    }
    if (spec->preset == previous) {
        return {};
    }
    // Thawed first: a frozen process cannot act on the stop signal.
    m_slice->release();
    const workload::WorkloadSpec before = m_supervisor->spec();
    const workload::WorkloadSpec after = *spec;
    m_boinc->stop();
    auto switched =
        m_supervisor->switchTo(std::move(*spec), std::chrono::steady_clock::now(), m_chooser->pathVariable());
    // The BOINC client that no longer runs gets the volunteer's override back: the old one after a switch,
    // the new one when it did not start (the old work runs again).
    restoreBoinc(switched ? before : after, &m_supervisor->spec());
    m_boinc->start(m_supervisor->spec(), m_slice->workPids());
    if (!switched) {
        (void)writeFileAtomically(m_config.workloadFile, workload::writePresetFile(previous));
    }
    // Whichever work runs now starts from the controller's initial state, frozen until the next period.
    auto restarted = m_loop->restart();
    if (!switched) {
        return switched;
    }
    if (!restarted) {
        return restarted.error().within("the workload was changed, but the new work could not be frozen "
                                        "until the next period measures it: ");
    }
    return {};
}

Result<void> Daemon::setExclusivePrograms(const std::vector<std::string>& names) {
    auto checked = desktop::checkProgramList(names);
    if (!checked) {
        return checked.error().within("the named programs were not changed: ");
    }
    // Saved first, like the parameters: the list nicerd uses is the one it starts with next time.
    if (auto saved = writeFileAtomically(m_config.programListFile, desktop::writeProgramListFile(*checked));
        !saved) {
        return saved.error().within("the named programs were not changed: ");
    }
    m_rules->setPrograms(std::move(*checked));
    return {};
}

void Daemon::restoreBoinc(const workload::WorkloadSpec& stopped, const workload::WorkloadSpec* running) {
    if (auto restored = BoincSupervisor::restore(stopped, running); !restored) {
        m_lastError = restored.error().message;
    }
}

api::DaemonState Daemon::state() const {
    api::DaemonState s;
    s.params = m_config.params;
    s.signalSetting = m_config.signal;
    s.lastError = m_lastError;
    // Each part from its owner, once it is there (the service reads the state while nicerd starts).
    if (m_loop) {
        m_loop->describe(s);
    }
    if (m_pause) {
        m_pause->describe(s);
    }
    if (m_slice) {
        m_slice->describe(s);
    }
    if (m_supervisor) {
        m_supervisor->describe(s);
        s.workloadPresets = m_chooser->choices();
    }
    if (m_downloads) {
        m_downloads->describe(s);
    }
    if (m_rules) {
        m_rules->describe(s);
    }
    if (m_sleep) {
        m_sleep->describe(s);
    }
    if (m_memory) {
        m_memory->describe(s);
    } else {
        s.memoryNote = m_memoryNote;
    }
    if (m_boinc) {
        s.boinc = m_boinc->status();
    }
    return s;
}

std::filesystem::path Daemon::downloadDir() const {
    return m_downloads ? m_downloads->dir() : std::filesystem::path();
}

BoincRequests& Daemon::boinc() {
    return *m_boinc;
}

Result<void> Daemon::pause(PauseEnd end) {
    return m_pause->pause(end, std::chrono::system_clock::now());
}

Result<void> Daemon::resume() {
    return m_pause->resume();
}

} // namespace nicer::daemon
