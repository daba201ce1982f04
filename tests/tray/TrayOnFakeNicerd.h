#pragma once
// The tray's window against nicerd's own D-Bus service over a fake nicerd (tests/dbus/DbusTestSupport.h), on
// a private bus: what the tray reads is the wire format nicerd writes, and what it sends reaches nicerd.

#include "DbusTestSupport.h"
#include "tray/Autostart.h"
#include "tray/DaemonProxy.h"
#include "tray/MainWindow.h"

#include <QDBusConnection>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <catch2/catch.hpp>

#include <functional>
#include <mutex>
#include <optional>

namespace nicer::tray::test {

/// A bound on a stuck bus, never a performance claim.
inline constexpr int kFakeNicerdWaitMs = 30'000;

/// The fake nicerd served on a private bus, and the tray's window shown on another connection to it, once
/// the window has read nicerd's properties. Qt shares a connection by @p name: each test passes its own.
struct TrayOnFakeNicerd {
    TrayOnFakeNicerd(const QString& name, const std::function<void(dbus::test::FakeDaemon&)>& setUp)
        : connection(QDBusConnection::connectToBus(QString::fromStdString(bus.address()), name))
        , daemon(connection)
        , window(daemon, false, Autostart(home.filePath("autostart"))) {
        setUp(fake);
        service.emplace(bus, fake);
        QSignalSpy read(&daemon, &DaemonProxy::propertiesChanged);
        window.show();
        daemon.start(false);
        REQUIRE(QTest::qWaitFor([&] { return daemon.isConnected() && read.count() > 0; }, kFakeNicerdWaitMs));
    }
    ~TrayOnFakeNicerd() { QDBusConnection::disconnectFromBus(connection.name()); }
    TrayOnFakeNicerd(const TrayOnFakeNicerd&) = delete;
    TrayOnFakeNicerd& operator=(const TrayOnFakeNicerd&) = delete;

    /// Changes what the fake reports, as the real nicerd's downloads or BOINC session would; the service
    /// announces it at its next period (service->run(... announceChanges())).
    void change(const std::function<void(dbus::test::FakeDaemon&)>& f) {
        std::lock_guard lock(fake.mutex);
        f(fake);
    }

    QTemporaryDir home;
    dbus::test::PrivateBus bus;
    dbus::test::FakeDaemon fake;
    std::optional<dbus::test::ServedService> service; ///< reset: nicerd leaves the bus
    QDBusConnection connection;
    DaemonProxy daemon;
    MainWindow window;
};

} // namespace nicer::tray::test
