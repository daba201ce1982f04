#pragma once

#include "api/Sample.h"
#include "daemon/DaemonControl.h"
#include "daemon/DaemonObserver.h"
#include "libsystemd/Bus.h"

namespace nicer::dbus {

/**
 * nicerd's D-Bus object (org.nicer.Daemon1 at /org/nicer/Daemon, see resources/org.nicer.Daemon1.xml):
 * parameters, state, downloads and the BOINC client's state as properties, a Sample signal every period,
 * Pause, Resume, SetParameters, SetWorkloadPreset, GetHistory and the BOINC client's attach and detach.
 * Exceptions never cross into sd-bus: handlers turn them into D-Bus errors.
 */
class DaemonService final : public daemon::DaemonObserver {
public:
    /// Registers the object on @p bus (not owned) and takes the well-known name; the error says when
    /// another nicerd already has it.
    static Result<std::unique_ptr<DaemonService>> publish(sd_bus* bus, daemon::DaemonControl& daemon);

    /// Emits the Sample signal.
    void onSample(const api::Sample& sample) override;
    /// Emits PropertiesChanged for the parameters and the pause state.
    void emitParametersChanged();
    /// Emits PropertiesChanged for the workload: Workload, DemoWorkload, Instances and WorkloadPreset.
    void emitWorkloadChanged();
    /// Emits PropertiesChanged for BoincState, BoincDetail, BoincSystemService and BoincOverrideApplied.
    void onBoincStateChanged() override;
    /// Emits PropertiesChanged for Actuator and ActuatorNote.
    void onActuatorChanged() override;

private:
    DaemonService(sd_bus* bus, daemon::DaemonControl& daemon)
        : m_bus(bus)
        , m_daemon(daemon) {}

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
    libsystemd::BusSlotPtr m_slot;
};

} // namespace nicer::dbus
