#pragma once

#include "actuator/DutyCycleActuator.h"
#include "actuator/QuotaActuator.h"
#include "boinc/SystemService.h"
#include "daemon/BoincSession.h"
#include "daemon/ControlLoop.h"
#include "daemon/DaemonConfig.h"
#include "daemon/DaemonControl.h"
#include "daemon/DaemonDownloads.h"
#include "daemon/DaemonObserver.h"
#include "daemon/QuotaEnforcement.h"
#include "daemon/WindowAlignment.h"
#include "kernel/CgroupLayout.h"
#include "libsystemd/Bus.h"
#include "libsystemd/Event.h"
#include "libsystemd/Timer.h"
#include "usermanager/SystemdUnitManager.h"
#include "workhost/WorkHostUnits.h"
#include "workload/WorkloadChooser.h"
#include "workload/WorkloadSupervisor.h"

#include <memory>
#include <optional>
#include <string>

namespace nicer::daemon {

/**
 * nicerd: runs the volunteer work in a systemd user slice and caps it every period with the controller.
 *
 * Start-up order matters for the fail-safe: the D-Bus name first (a second daemon stops there, touching
 * nothing), then the daemon's own unit that the work BindsTo= (so a crash stops the work), then the slice and
 * its actuator, and only then the work. On exit the work is thawed, stopped and the slice removed.
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

    // DaemonControl
    api::DaemonState state() const override;
    const std::deque<api::Sample>& history() const override { return m_loop->history(); }
    Result<void> setParams(const control::ControllerParams& params) override;
    Result<void> pause() override;
    Result<void> resume() override;
    Result<void> setWorkloadPreset(const std::string& id) override;
    void boincAttach(const std::string& url, const std::string& key, BoincDone done) override;
    void boincAttachAccountManager(const std::string& url, const std::string& name,
                                   const std::string& password, BoincDone done) override;
    void boincDetach(const std::string& url, BoincDone done) override;

    /// Where the downloads go; empty when there are none.
    std::filesystem::path downloadDir() const;

private:
    Daemon(DaemonConfig config, PublishDaemon publish)
        : m_config(std::move(config))
        , m_publish(std::move(publish)) {}
    Result<void> start();
    Result<workload::WorkloadSpec> startupWorkload();
    /// Connects to the session bus and publishes nicerd's service on it (the name first, so that a second
    /// daemon stops here).
    Result<void> connectBus();
    /// When the session bus has closed (it restarted), connects again; until then the loop runs on and
    /// nicerd's state is simply not on the bus.
    void checkBus();
    Result<std::string> ownUnit();
    /// The user manager's boundary for the split signal, or null (told on stderr) when it cannot be read.
    std::unique_ptr<UserManagerBoundary> findBoundary();
    Result<void> selectActuator();
    /// Gives the slice its memory limit (either actuator's); one that cannot be had is said in m_memoryNote.
    /// Puts the work in the root idle slice where the system part allows it (DaemonConfig::placement), else
    /// leaves it in the user manager's slice; either way m_placementNote says why.
    Result<void> choosePlacement();
    void applyMemoryLimit();
    /// A duty cycle on the slice's @p cgroup, by @p method or else the freezer where the cgroup has one.
    Result<std::unique_ptr<actuator::QuotaActuator>>
    createDutyCycle(const std::string& cgroup, std::optional<actuator::DutyCycleMethod> method);
    /// Before @p spec starts: when it runs the BOINC client, nicer's override goes into its directory.
    Result<void> prepareBoinc(const workload::WorkloadSpec& spec);
    /// After the work started: watches its BOINC client, if it runs one.
    void startBoinc();
    /// After @p stopped stopped: its BOINC client gets the volunteer's override back, unless the work
    /// @p running now uses the same BOINC directory.
    void restoreBoinc(const workload::WorkloadSpec& stopped, const workload::WorkloadSpec* running = nullptr);
    void checkSystemService();
    /// Why the actuator caps the work less well than it could (and the memory limit's note); empty when all
    /// is well.
    std::string actuatorNote() const;
    api::BoincStatus boincStatus() const;
    void shutdown();
    void onTick();
    void onTimer();
    /// Puts @p fallback in the place of the slice's actuator, whose quota the kernel does not enforce.
    void switchActuator(EnforcementWatch::Fallback fallback);
    /// Moves the tick schedule onto the kernel's bandwidth windows, one of which started at @p windowStart.
    void alignTicks(libsystemd::Timer::Time windowStart);

    DaemonConfig m_config;
    PublishDaemon m_publish;
    libsystemd::EventPtr m_event;
    libsystemd::BusPtr m_bus;
    std::unique_ptr<usermanager::SystemdUnitManager> m_userUnits; ///< the user manager
    std::unique_ptr<workhost::WorkHostUnits> m_rootUnits; ///< the root idle slice, when the work runs there
    usermanager::UnitManager* m_units = nullptr;          ///< where the work runs: one of the two
    std::string m_placementNote;                          ///< why the work runs where it runs
    std::optional<kernel::CgroupLayout> m_layout;
    std::unique_ptr<DaemonObserver> m_observer; ///< the D-Bus service; null while the bus is gone
    std::unique_ptr<actuator::QuotaActuator> m_actuator;
    std::unique_ptr<workload::WorkloadChooser> m_chooser;
    std::unique_ptr<workload::WorkloadSupervisor> m_supervisor;
    std::unique_ptr<UserManagerBoundary> m_boundary;
    std::unique_ptr<ControlLoop> m_loop;
    std::unique_ptr<DaemonDownloads> m_downloads;
    std::unique_ptr<BoincSession> m_boinc;
    std::string m_boincError;                       ///< why the work's BOINC client cannot be governed
    boinc::SystemServiceProbe m_systemServiceProbe; ///< the system-wide BOINC client, by system bus or link
    std::string m_systemService; ///< advice while the system-wide BOINC client is enabled or running
    int m_ticks = 0;
    libsystemd::Timer m_timer;
    std::unique_ptr<WindowAlignment> m_alignment;
    std::unique_ptr<EnforcementWatch> m_enforcement; ///< while the slice's quota caps the work
    std::string m_ownScope;                          ///< the scope this daemon created for itself, if any
    std::string m_lastError;
    std::string m_actuatorNote;         ///< why nicerd chose a duty cycle, when it fell back to one
    std::string m_memoryNote;           ///< why the memory limit asked for is not in force
    std::uint64_t m_memoryMaxBytes = 0; ///< the memory limit in force, 0 when none
    std::string m_busError;             ///< why the last attempt to get back on the session bus failed
    bool m_sliceStarted = false;
    bool m_shutDown = false;
};

} // namespace nicer::daemon
