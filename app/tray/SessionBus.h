#pragma once

#include <QDBusConnection>
#include <QObject>
#include <QString>

#include <optional>

class QTimer;

namespace nicer::tray {

/**
 * The tray's connection to the session bus, which outlives the bus itself.
 *
 * When dbus-daemon (or dbus-broker) goes away, a QDBusConnection stays closed for good: Qt's default session
 * connection never comes back. This one owns a named connection, notices that it closed (QtDBus tells no
 * one, so it looks every second), says so with disconnected(), and connects again to the same address, with
 * a back-off, until a new bus answers there (systemd's dbus.socket starts one on the first connection);
 * then reconnected() hands over the new connection, on which everyone registers again.
 */
class SessionBus : public QObject {
    Q_OBJECT

public:
    /// The desktop's session bus (DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus). Connects at once.
    explicit SessionBus(QObject* parent = nullptr);
    /// The bus at @p address, e.g. a test's private dbus-daemon. Give no guid in it: a new bus has another.
    explicit SessionBus(const QString& address, QObject* parent = nullptr);
    ~SessionBus() override;
    SessionBus(const SessionBus&) = delete;
    SessionBus& operator=(const SessionBus&) = delete;

    /// The connection now: a closed one while the bus is gone.
    QDBusConnection connection() const { return m_connection; }
    bool isConnected() const { return m_connection.isConnected(); }

signals:
    /// The bus went away; connection() is closed until reconnected().
    void disconnected();
    /// A bus answers again: @p connection is new (names, objects and matches of the old one are gone).
    void reconnected(const QDBusConnection& connection);

private:
    bool connectNow();
    void onTimer();

    std::optional<QString> m_address; ///< none: the session bus of the desktop
    QDBusConnection m_connection;
    QTimer* m_timer = nullptr;
    int m_retryMs = 0;
};

} // namespace nicer::tray
