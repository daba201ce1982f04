#include "tray/DaemonProxy.h"
#include "tray/MainWindow.h"
#include "tray/PrivateBus.h"

#include <QSignalSpy>
#include <QTest>
#include <catch2/catch.hpp>

using nicer::tray::DaemonProxy;
using nicer::tray::isDaemonNotInstalled;
using nicer::tray::MainWindow;

namespace {

constexpr auto kServiceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown";
using nicer::tray::test::kBusWaitMs;

} // namespace

TEST_CASE("nicerd counts as not installed only when neither way knows it", "[tray]") {
    CHECK(isDaemonNotInstalled(kServiceUnknown, "org.freedesktop.systemd1.NoSuchUnit",
                               "Unit nicerd.service not found."));
    CHECK(isDaemonNotInstalled(kServiceUnknown, "org.freedesktop.DBus.Error.LoadFailed",
                               "Unit nicerd.service not found."));
    // No user manager, or one the flatpak's bus proxy hides.
    CHECK(isDaemonNotInstalled(kServiceUnknown, kServiceUnknown, "The name is not activatable"));
    CHECK(isDaemonNotInstalled(kServiceUnknown, "org.freedesktop.DBus.Error.AccessDenied", "denied"));
    CHECK(isDaemonNotInstalled(kServiceUnknown, "org.freedesktop.DBus.Error.Spawn.ChildExited", "exited"));
    // Installed but failing: the other message, with both errors.
    CHECK_FALSE(isDaemonNotInstalled("org.freedesktop.DBus.Error.Spawn.ChildExited",
                                     "org.freedesktop.systemd1.NoSuchUnit",
                                     "Unit nicerd.service not found."));
    CHECK_FALSE(isDaemonNotInstalled(kServiceUnknown, "org.freedesktop.systemd1.UnitMasked",
                                     "Unit nicerd.service is masked."));
}

TEST_CASE("on a bus with no nicerd and no systemd the window says nicerd is not installed and how to get it",
          "[tray]") {
    nicer::tray::test::PrivateBus bus;
    DaemonProxy daemon(bus.connect("tray"));
    MainWindow window(daemon, false);
    window.show();
    QSignalSpy errors(&daemon, &DaemonProxy::errorOccurred);
    daemon.start(true);
    REQUIRE(QTest::qWaitFor([&] { return errors.count() > 0; }, kBusWaitMs));
    const QString text = window.errorText();
    INFO(text.toStdString());
    CHECK(text.contains("nicerd (the nicer daemon) is not installed on this computer"));
    CHECK(text.contains("sudo apt install ./nicer_*.deb"));
    CHECK(text.contains("nicer-tray only shows and tunes it"));
    CHECK_FALSE(daemon.isStarting());
}
