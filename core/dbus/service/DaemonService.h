#pragma once

#include "api/Boinc.h"
#include "api/DownloadEntry.h"
#include "api/Sample.h"
#include "daemon/DaemonControl.h"
#include "daemon/DaemonObserver.h"
#include "libsystemd/Bus.h"

#include <string>
#include <vector>

namespace nicer::dbus {

/**
 * nicerd's D-Bus object (org.nicer.Daemon1 at /org/nicer/Daemon, see resources/org.nicer.Daemon1.xml):
 * parameters, state, downloads and the BOINC client's state as properties, a Sample signal every period,
 * Pause, Resume, SetParameters, SetWorkloadPreset, GetHistory and the BOINC client's attach and detach.
 * Every property that changes while nicerd runs, except the per-period values the Sample signal carries
 * (and WorkloadPresets, CpuCount), is announced by PropertiesChanged with its new value: clients read
 * everything once when nicerd appears and then only listen.
 * Exceptions never cross into sd-bus: handlers turn them into D-Bus errors.
 */
class DaemonService final : public daemon::DaemonObserver {
public:
    /// Registers the object on @p bus (not owned) and takes the well-known name; the error says when
    /// another nicerd already has it.
    static Result<std::unique_ptr<DaemonService>> publish(sd_bus* bus, daemon::DaemonControl& daemon);

    /// Emits the Sample signal, then announceChanges().
    void onSample(const api::Sample& sample) override;
    /// Emits PropertiesChanged, with the new values, for those of LastError, Downloads, DownloadRate and the
    /// Boinc* properties that differ from what was last announced (or what they were at publish()); nothing
    /// when none does. Called every period (onSample) and when the BOINC client's state changes.
    void announceChanges();
    /// Emits PropertiesChanged for the parameters and the pause state.
    void emitParametersChanged();
    /// Emits PropertiesChanged for the workload: Workload, DemoWorkload, Instances and WorkloadPreset.
    void emitWorkloadChanged();
    /// announceChanges(): the BOINC client's state is announced at once, not at the next period.
    void onBoincStateChanged() override;
    /// Emits PropertiesChanged for Actuator and ActuatorNote.
    void onActuatorChanged() override;

private:
    /// The values of the properties that announceChanges() compares.
    struct Announced {
        std::string lastError;
        std::vector<api::DownloadEntry> downloads;
        double downloadRate = 0.0;
        api::BoincStatus boinc;
    };

    DaemonService(sd_bus* bus, daemon::DaemonControl& daemon)
        : m_bus(bus)
        , m_daemon(daemon)
        , m_announced(announced()) {}

    /// The daemon's values of the properties announceChanges() compares, now.
    Announced announced() const;

    static int getProperty(sd_bus* bus, const char* path, const char* interface, const char* property,
                           sd_bus_message* reply, void* userdata, sd_bus_error* error) noexcept;
    static int onPause(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onResume(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onSetParameters(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onSetWorkloadPreset(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onGetHistory(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onBoincAttach(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onBoincAttachAccountManager(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onBoincDetach(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    /// The BOINC methods' common part: checks that a client runs, then answers @p m when @p request's
    /// callback is called (the reply is sent later, from the loop).
    int startBoincRequest(sd_bus_message* m, sd_bus_error* error,
                          const std::function<void(daemon::DaemonControl::BoincDone)>& request);

    /// s_vtable with the controller's parameters (control::parameterTable()) in front.
    static const sd_bus_vtable* vtable();

    static const sd_bus_vtable s_vtable[];

    sd_bus* m_bus;
    daemon::DaemonControl& m_daemon;
    Announced m_announced; ///< as clients last saw them
    libsystemd::BusSlotPtr m_slot;
};

} // namespace nicer::dbus
