#pragma once

#include "daemon/DaemonControl.h"
#include "daemon/DaemonObserver.h"
#include "libsystemd/Connection.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <memory>
#include <string>

namespace nicer::daemon {

/**
 * nicerd on the session bus: its connection on the daemon's loop, its service published there (the
 * observer the daemon reports to), and a new connection when the bus restarted. While the bus is gone the
 * daemon runs on; its state is simply not on the bus.
 */
class SessionBusLink {
public:
    /// Publishes @p daemon with @p publish on each connection, attached to @p event.
    SessionBusLink(sd_event* event, PublishDaemon publish, DaemonControl& daemon)
        : m_publish(std::move(publish))
        , m_daemon(daemon)
        , m_bus(event, libsystemd::BusTarget::user(),
                {.connected = [this](sd_bus* bus) { return publishOn(bus); }, .lost = {}, .onError = {}}) {}
    ~SessionBusLink();
    SessionBusLink(const SessionBusLink&) = delete;
    SessionBusLink& operator=(const SessionBusLink&) = delete;

    /// Connects and publishes (the name first, so that a second nicerd stops here).
    Result<void> connect();
    /// When the bus has closed (it restarted), connects again; says so on stderr, once per change.
    void check();
    /// The service on the bus, or null while there is none.
    DaemonObserver* observer() const { return m_observer.get(); }

private:
    /// On each new connection: the service and its name.
    Result<void> publishOn(sd_bus* bus);

    PublishDaemon m_publish;
    DaemonControl& m_daemon;
    libsystemd::Connection m_bus;
    std::unique_ptr<DaemonObserver> m_observer; ///< null while the bus is gone
    std::string m_error;                        ///< why the last attempt to get back on the bus failed
};

} // namespace nicer::daemon
