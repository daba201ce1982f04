#include "daemon/SessionBusLink.h"

#include "util/Log.h"

namespace nicer::daemon {

SessionBusLink::~SessionBusLink() {
    m_observer.reset(); // the service's object and name go first
    if (m_bus) {
        sd_bus_flush(m_bus.get());
    }
}

Result<void> SessionBusLink::connect() {
    sd_bus* bus = nullptr;
    if (int r = sd_bus_open_user(&bus); r < 0) {
        return libsystemd::busError("cannot connect to the session bus (is a systemd user session running?)",
                                    r);
    }
    libsystemd::BusPtr owned(bus);
    if (int r = sd_bus_attach_event(bus, m_event, SD_EVENT_PRIORITY_NORMAL); r < 0) {
        return libsystemd::busError("cannot attach the session bus to the event loop", r);
    }
    auto observer = m_publish(bus, m_daemon);
    if (!observer) {
        return observer.error();
    }
    m_bus = std::move(owned);
    m_observer = std::move(*observer);
    return {};
}

void SessionBusLink::check() {
    if (m_observer && sd_bus_is_open(m_bus.get()) > 0) {
        return;
    }
    if (m_observer) {
        log::warning() << "nicerd: the session bus closed; the work stays under control, connecting again";
        m_observer.reset(); // its object and name went with the old connection
        m_bus.reset();
    }
    if (auto connected = connect(); !connected) {
        if (m_error != connected.error().message) {
            m_error = connected.error().message;
            log::warning() << "nicerd: not on the session bus yet: " << m_error;
        }
        return;
    }
    m_error.clear();
    log::notice() << "nicerd: back on the session bus";
}

} // namespace nicer::daemon
