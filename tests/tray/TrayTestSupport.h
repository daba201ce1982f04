#pragma once
// What several tray tests arrange the same way: a bus nobody listens on, and an empty file.

#include <QDBusConnection>
#include <QFile>
#include <QString>
#include <catch2/catch.hpp>

namespace nicer::tray::test {

/// A bus address nobody listens on: the window must say so, not hang or crash. Qt shares a connection by
/// @p name, so a test that must not see another's state passes a name of its own.
inline QDBusConnection deadBus(const QString& name = QStringLiteral("nicer-dead-bus")) {
    return QDBusConnection::connectToBus(QStringLiteral("unix:path=/nonexistent/nicer-test-bus"), name);
}

/// Creates @p path as an empty file, e.g. a file where a folder should be, or a sandbox marker.
inline void createEmptyFile(const QString& path) {
    QFile file(path);
    REQUIRE(file.open(QIODevice::WriteOnly));
}

} // namespace nicer::tray::test
