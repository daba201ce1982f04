#include "daemon/SessionBusLink.h"

#include "util/Log.h"

namespace nicer::daemon {

SessionBusLink::~SessionBusLink() {
    m_observer.reset(); // the service's object and name go first
    m_bus.close();      // flushed: a reply to a caller is not lost
}

Result<void> SessionBusLink::connect() {
    if (auto connected = m_bus.connect(); !connected) {
        if (connected.error().kind == ErrorKind::Unavailable) {
            return connected.error().within(
                "cannot connect to the session bus (is a systemd user session running?): ");
        }
        return connected.error(); // publishOn()'s
    }
    return {};
}

Result<void> SessionBusLink::publishOn(sd_bus* bus) {
    auto observer = m_publish(bus, m_daemon);
    if (!observer) {
        return observer.error();
    }
    m_observer = std::move(*observer);
    return {};
}

void SessionBusLink::check() {
    if (m_observer && m_bus.isOpen()) {
        return;
    }
    if (m_observer) {
        log::warning() << "nicerd: the session bus closed; the work stays under control, connecting again";
        m_observer.reset(); // its object and name went with the old connection
        m_bus.close();
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
