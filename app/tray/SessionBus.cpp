#include "tray/SessionBus.h"

#include <QTimer>

#include <algorithm>

namespace nicer::tray {

namespace {

// How often a live connection is looked at: a closed one is a flag in libdbus, so this costs nothing.
constexpr int kPollMs = 1000;
// While the bus is gone: the first attempt at once, then ever longer waits, never longer than this.
constexpr int kFirstRetryMs = 250;
constexpr int kMaxRetryMs = 5000;

} // namespace

SessionBus::SessionBus(QObject* parent)
    : SessionBus(QString(), parent) {}

SessionBus::SessionBus(const QString& address, QObject* parent)
    : QObject(parent)
    , m_address(address.isEmpty() ? std::nullopt : std::optional<QString>(address))
    , m_connection(QString())
    , m_timer(new QTimer(this)) {
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &SessionBus::onTimer);
    // At once, so that the single-instance claim and the first call to nicerd have a bus.
    m_retryMs = connectNow() ? 0 : kFirstRetryMs;
    m_timer->start(m_retryMs == 0 ? kPollMs : m_retryMs);
}

SessionBus::~SessionBus() {
    QDBusConnection::disconnectFromBus(m_connection.name());
}

bool SessionBus::connectNow() {
    // QtDBus keeps connections by name in the process, and a closed one would be handed back again under
    // its old name: every attempt gets a new one, and the last is let go.
    static int serial = 0;
    const QString name = QStringLiteral("nicer-session-bus-%1").arg(++serial);
    QDBusConnection connection = m_address ? QDBusConnection::connectToBus(*m_address, name)
                                           : QDBusConnection::connectToBus(QDBusConnection::SessionBus, name);
    if (!m_connection.name().isEmpty()) {
        QDBusConnection::disconnectFromBus(m_connection.name());
    }
    m_connection = connection;
    return m_connection.isConnected();
}

void SessionBus::onTimer() {
    if (m_retryMs == 0) {
        if (m_connection.isConnected()) {
            m_timer->start(kPollMs);
            return;
        }
        m_retryMs = kFirstRetryMs;
        emit disconnected();
        // A socket-activated bus starts on this very attempt.
    } else {
        m_retryMs = std::min(2 * m_retryMs, kMaxRetryMs);
    }
    if (!connectNow()) {
        m_timer->start(m_retryMs);
        return;
    }
    m_retryMs = 0;
    m_timer->start(kPollMs);
    emit reconnected(m_connection);
}

} // namespace nicer::tray
