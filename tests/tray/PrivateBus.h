#pragma once
// A private session bus (dbus-daemon) for one test: no service files, no systemd on it, nobody else on it.
// It listens on a fixed socket in its own directory, so that a test can kill it and start a new one at the
// same address, as a desktop's dbus.socket does when the session bus restarts.

#include "PrivateBusConfig.h"

#include <QDBusConnection>
#include <QDeadlineTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <catch2/catch.hpp>

namespace nicer::tray::test {

/// How long a tray test waits for an answer on a bus: a bound on a stuck bus, never a performance claim.
inline constexpr int kBusWaitMs = 30'000;

class PrivateBus {
public:
    PrivateBus() {
        REQUIRE(m_dir.isValid());
        m_socket = m_dir.filePath("bus");
        // No guid in the address: a bus started again there has another, and a client must not insist.
        m_address = "unix:path=" + m_socket;
        QFile config(m_dir.filePath("bus.conf"));
        REQUIRE(config.open(QIODevice::WriteOnly));
        config.write(QByteArray::fromStdString(
            nicer::test::privateBusConfig(m_dir.path().toStdString(), m_address.toStdString())));
        m_config = config.fileName();
        config.close();
        start();
    }
    ~PrivateBus() {
        for (const QString& name : m_names) {
            QDBusConnection::disconnectFromBus(name);
        }
        m_process.terminate();
        m_process.waitForFinished();
    }
    PrivateBus(const PrivateBus&) = delete;
    PrivateBus& operator=(const PrivateBus&) = delete;

    /// unix:path=... of the bus, the same after start() again.
    const QString& address() const { return m_address; }

    /// A new connection to the bus (each is its own client, like another process).
    QDBusConnection connect(const QString& name) {
        const QString unique = QStringLiteral("nicer-private-bus-%1-%2").arg(quintptr(this)).arg(name);
        m_names << unique;
        return QDBusConnection::connectToBus(m_address, unique);
    }

    /// The bus dies at once (SIGKILL), as a crashed dbus-daemon: every connection to it closes.
    void kill() {
        m_process.kill();
        REQUIRE(m_process.waitForFinished());
        QFile::remove(m_socket); // a killed dbus-daemon leaves its socket behind
    }

    /// Starts the bus (again, after kill()) at the same address; returns once it accepts connections.
    void start() {
        const QString daemon = QStandardPaths::findExecutable("dbus-daemon");
        INFO("dbus-daemon is missing: install the dbus-daemon package (packaging/dev.sh does)");
        REQUIRE_FALSE(daemon.isEmpty());
        m_process.start(daemon, {"--config-file=" + m_config, "--nofork", "--print-address=1"});
        REQUIRE(m_process.waitForStarted());
        const QDeadlineTimer deadline(30'000); // a bound on a stuck dbus-daemon, not a claim on its speed
        while (!m_process.canReadLine() && !deadline.hasExpired()) {
            m_process.waitForReadyRead(100);
        }
        const QString printed = QString::fromUtf8(m_process.readLine()).trimmed();
        INFO(m_process.readAllStandardError().toStdString());
        REQUIRE(printed.startsWith(m_address + ","));
    }

private:
    QTemporaryDir m_dir;
    QString m_socket;
    QString m_address;
    QString m_config;
    QProcess m_process;
    QStringList m_names;
};

} // namespace nicer::tray::test
