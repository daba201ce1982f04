#pragma once

#include "api/DaemonState.h"
#include "api/Sample.h"
#include "daemon/DaemonControl.h"
#include "daemon/DaemonObserver.h"
#include "libsystemd/Bus.h"

#include <functional>
#include <memory>

namespace nicer::dbus {

/**
 * nicerd's D-Bus object (org.nicer.Daemon1 at /org/nicer/Daemon, see resources/org.nicer.Daemon1.xml):
 * the daemon's state as properties, one per row of api::daemonProperties(), a Sample signal every period,
 * Pause, Resume, SetParameters, SetWorkloadPreset, SetExclusivePrograms, GetHistory and the BOINC client's
 * attach and detach.
 * Every property the table marks Announce::OnChange is announced by PropertiesChanged with its new value
 * when it differs from what clients last saw: clients read everything once when nicerd appears and then
 * only listen. Exceptions never cross into sd-bus: handlers turn them into D-Bus errors.
 */
class DaemonService final : public daemon::DaemonObserver {
public:
    /// Registers the object on @p bus (not owned) and takes the well-known name; the error says when
    /// another nicerd already has it.
    static Result<std::unique_ptr<DaemonService>> publish(sd_bus* bus, daemon::DaemonControl& daemon);

    /// Emits the Sample signal, then announceChanges().
    void onSample(const api::Sample& sample) override;
    /// announceChanges() at once, not at the next period.
    void onStateChanged() override;
    /// Emits PropertiesChanged, with the new values, for the announced properties whose values differ from
    /// what was last announced (or what they were at publish()); nothing when none does. Called every period,
    /// after each command and when the daemon says its state changed.
    void announceChanges();

private:
    DaemonService(sd_bus* bus, daemon::DaemonControl& daemon)
        : m_bus(bus)
        , m_daemon(daemon)
        , m_announced(daemon.state()) {}

    /// The daemon's state for the getter answering @p reply: read once per reply, so that GetAll's
    /// properties come from one state.
    const api::DaemonState& stateFor(sd_bus_message* reply);

    static int getProperty(sd_bus* bus, const char* path, const char* interface, const char* property,
                           sd_bus_message* reply, void* userdata, sd_bus_error* error) noexcept;
    static int onPause(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onResume(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onSetParameters(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onSetWorkloadPreset(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onSetExclusivePrograms(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onGetHistory(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onBoincAttach(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onBoincAttachAccountManager(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onBoincDetach(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    /// The BOINC methods' common part: checks that a client runs, then answers @p m when @p request's
    /// callback is called (the reply is sent later, from the loop).
    int startBoincRequest(sd_bus_message* m, sd_bus_error* error,
                          const std::function<void(daemon::BoincRequests::Done)>& request);

    /// The properties from api::daemonProperties(), then s_methods.
    static const sd_bus_vtable* vtable();

    static const sd_bus_vtable s_methods[];

    sd_bus* m_bus;
    daemon::DaemonControl& m_daemon;
    api::DaemonState m_announced; ///< as clients last saw it
    api::DaemonState m_read;      ///< what the getters answer m_readFor from
    libsystemd::BusMessagePtr m_readFor;
    libsystemd::BusSlotPtr m_slot;
};

} // namespace nicer::dbus
