#pragma once

#include "daemon/BoincSupervisor.h"
#include "daemon/ControlLoop.h"
#include "daemon/DaemonConfig.h"
#include "daemon/DaemonControl.h"
#include "daemon/DaemonDownloads.h"
#include "daemon/DaemonObserver.h"
#include "daemon/MemoryWatch.h"
#include "daemon/PeriodTimer.h"
#include "daemon/QuotaEnforcement.h"
#include "daemon/RuleSources.h"
#include "daemon/SessionBusLink.h"
#include "daemon/SleepPolicy.h"
#include "daemon/UserManagerBoundary.h"
#include "daemon/UserPause.h"
#include "daemon/WorkSlice.h"
#include "libsystemd/Event.h"
#include "workload/WorkloadChooser.h"
#include "workload/WorkloadSupervisor.h"

#include <filesystem>
#include <memory>
#include <string>

namespace nicer::daemon {

/**
 * nicerd: runs the volunteer work in a systemd slice and caps it every period with the controller. It only
 * orchestrates: where the work runs and what caps it is WorkSlice's, the period's clock PeriodTimer's, BOINC
 * BoincSupervisor's, the downloads DaemonDownloads', the controller and the volunteer's rules ControlLoop's,
 * what those rules read RuleSources'.
 *
 * Start-up order matters for the fail-safe: the D-Bus name first (a second daemon stops there, touching
 * nothing), then the slice and its actuator, then the daemon's own unit that the work BindsTo= (so a crash
 * stops the work), and only then the work. On exit the work is thawed, stopped and the slice removed.
 *
 * With manifests it also downloads the workload's files (DaemonDownloads) on the same loop, started after
 * the work; the plan is checked before the work starts, so a bad one stops the start.
 */
class Daemon final : public DaemonControl {
public:
    /// @p publish puts it on the session bus (see PublishDaemon).
    static Result<std::unique_ptr<Daemon>> create(DaemonConfig config, PublishDaemon publish);
    ~Daemon() override;

    /// Runs the event loop until it is told to exit (nicerd: on SIGTERM or SIGINT, libsystemd/ExitSignals.h),
    /// then stops the work; returns the exit status.
    int run();
    /// The loop everything of the daemon runs on, for the program's own sources (its stop signals).
    sd_event* event() const { return m_event.get(); }
    /// Where the downloads go; empty when there are none.
    std::filesystem::path downloadDir() const;

    // DaemonControl
    api::DaemonState state() const override;
    const std::deque<api::Sample>& history() const override { return m_loop->history(); }
    Result<void> setParams(const control::ControllerParams& params) override;
    Result<void> pause(PauseEnd end) override;
    Result<void> resume() override;
    Result<void> setWorkloadPreset(const std::string& id) override;
    Result<void> setExclusivePrograms(const std::vector<std::string>& names) override;
    BoincRequests& boinc() override;

private:
    Daemon(DaemonConfig config, PublishDaemon publish)
        : m_config(std::move(config))
        , m_publish(std::move(publish)) {}
    Result<void> start();
    /// The workload to start with (DaemonConfig: the command line, nicerd.conf and what was chosen at run
    /// time, by the rule of daemon/SettingPrecedence.h), checked with the parameters before anything starts.
    Result<workload::WorkloadSpec> startupWorkload();
    /// Creates the event loop and goes on the session bus (SessionBusLink).
    Result<void> openLoop();
    /// The downloads of the manifests, checked but not started yet; none without manifests.
    Result<void> planDownloads(const workload::WorkloadSpec& spec);
    /// Starts @p spec in the slice, bound to nicerd's own unit, and follows its BOINC client.
    Result<void> startWork(workload::WorkloadSpec spec);
    /// The controller's loop on the slice's actuator, the work frozen until the first period, and its clock.
    Result<void> startLoop();
    void onTick();
    /// The memory rule's reading for the profile of @p presence, before a step.
    control::MemoryReading readMemory(control::Presence presence);
    /// Gives the work the memory rule's hold (its memory limit, what to reclaim, the instances to end) with
    /// the profile of @p presence.
    void applyMemoryHold(const control::MemoryHold& hold, control::Presence presence);
    /// A PSI trigger fired: the memory rule at once, between periods.
    void onMemoryPressure();
    /// Puts @p fallback in the place of the slice's actuator, whose quota the kernel does not enforce.
    void switchActuator(EnforcementWatch::Fallback fallback);
    /// Tells the bus's observer (PropertiesChanged) that the state changed outside a period.
    void announceStateChange();
    /// After @p stopped stopped: its BOINC client gets the volunteer's override back (a failure is the last
    /// error), unless the work @p running now uses the same BOINC directory.
    void restoreBoinc(const workload::WorkloadSpec& stopped, const workload::WorkloadSpec* running = nullptr);
    void shutdown();

    DaemonConfig m_config;
    PublishDaemon m_publish;
    libsystemd::EventPtr m_event;
    std::unique_ptr<SessionBusLink> m_bus; ///< the session bus and nicerd's service on it
    std::unique_ptr<WorkSlice> m_slice;
    std::unique_ptr<workload::WorkloadChooser> m_chooser;
    std::unique_ptr<workload::WorkloadSupervisor> m_supervisor;
    std::unique_ptr<BoincSupervisor> m_boinc;
    std::unique_ptr<UserManagerBoundary> m_boundary;
    std::unique_ptr<ControlLoop> m_loop;
    std::unique_ptr<UserPause> m_pause; ///< the volunteer's own pause, kept across restarts
    std::unique_ptr<PeriodTimer> m_timer;
    std::unique_ptr<EnforcementWatch> m_enforcement; ///< while the slice's quota caps the work
    std::unique_ptr<DaemonDownloads> m_downloads;
    std::unique_ptr<RuleSources>
        m_rules; ///< what the volunteer's rules read: sensors, power, games, programs
    std::unique_ptr<SleepPolicy> m_sleep;  ///< keep-awake: logind's sleep inhibitor while the work runs
    std::unique_ptr<MemoryWatch> m_memory; ///< what the memory rule reads; null where it has nothing to read
    std::string m_memoryNote;              ///< why there is no memory rule, when there is none
    std::chrono::steady_clock::time_point m_memoryActed{}; ///< the last step of the memory rule
    std::string m_lastError;
    bool m_shutDown = false;
};

} // namespace nicer::daemon
