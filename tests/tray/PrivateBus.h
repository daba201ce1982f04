#pragma once
// A private session bus (dbus-daemon) for one test: no service files, no systemd on it, nobody else on it.

#include "PrivateBusConfig.h"

#include <QDBusConnection>
#include <QDeadlineTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <catch2/catch.hpp>

namespace nicer::tray::test {

class PrivateBus {
public:
    PrivateBus() {
        const QString daemon = QStandardPaths::findExecutable("dbus-daemon");
        INFO("dbus-daemon is missing: install the dbus-daemon package (packaging/dev.sh does)");
        REQUIRE_FALSE(daemon.isEmpty());
        REQUIRE(m_dir.isValid());
        QFile config(m_dir.filePath("bus.conf"));
        REQUIRE(config.open(QIODevice::WriteOnly));
        config.write(QByteArray::fromStdString(nicer::test::privateBusConfig(m_dir.path().toStdString())));
        config.close();
        m_process.start(daemon, {"--config-file=" + config.fileName(), "--nofork", "--print-address=1"});
        REQUIRE(m_process.waitForStarted());
        const QDeadlineTimer deadline(30'000); // a bound on a stuck dbus-daemon, not a claim on its speed
        while (!m_process.canReadLine() && !deadline.hasExpired()) {
            m_process.waitForReadyRead(100);
        }
        m_address = QString::fromUtf8(m_process.readLine()).trimmed();
        INFO(m_process.readAllStandardError().toStdString());
        REQUIRE_FALSE(m_address.isEmpty());
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

    /// A new connection to the bus (each is its own client, like another process).
    QDBusConnection connect(const QString& name) {
        const QString unique = QStringLiteral("nicer-private-bus-%1-%2").arg(quintptr(this)).arg(name);
        m_names << unique;
        return QDBusConnection::connectToBus(m_address, unique);
    }

private:
    QTemporaryDir m_dir;
    QProcess m_process;
    QString m_address;
    QStringList m_names;
};

} // namespace nicer::tray::test
