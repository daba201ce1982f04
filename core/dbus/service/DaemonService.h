#pragma once

#include "api/DaemonState.h"
#include "api/Sample.h"
#include "daemon/DaemonControl.h"
#include "daemon/DaemonObserver.h"
#include "libsystemd/Bus.h"
#include "libsystemd/BusObject.h"

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
 * only listen. The handlers are libsystemd::BusObject's: what one throws is a D-Bus error reply.
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

    /// The interface's members: a property per row of api::daemonProperties(), the methods, the signal.
    libsystemd::BusInterface members();
    using Done = daemon::BoincRequests::Done;

    /// A command's reply: @p done's error by its kind (@p unavailable names ErrorKind::Unavailable), or the
    /// empty reply after announceChanges().
    int answer(sd_bus_message* call, sd_bus_error* error, const Result<void>& done, const char* unavailable);
    /// The BOINC methods' common part: checks that a client runs, then answers @p call when @p request's
    /// callback is called (the reply is sent later, from the loop).
    int startBoincRequest(sd_bus_message* call, sd_bus_error* error,
                          const std::function<void(Done)>& request);
    int getHistory(sd_bus_message* call);

    sd_bus* m_bus;
    daemon::DaemonControl& m_daemon;
    api::DaemonState m_announced; ///< as clients last saw it
    api::DaemonState m_read;      ///< what the getters answer m_readFor from
    libsystemd::BusMessagePtr m_readFor;
    std::unique_ptr<libsystemd::BusObject> m_object;
};

} // namespace nicer::dbus
