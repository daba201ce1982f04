#include "tray/CpuChart.h"
#include "tray/DaemonProxy.h"
#include "tray/MainWindow.h"
#include "tray/ParametersPanel.h"

#include <QDBusConnection>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <catch2/catch.hpp>

using nicer::tray::DaemonProxy;
using nicer::tray::MainWindow;

namespace {

// A bus address nobody listens on: the window must say so, not hang or crash.
QDBusConnection deadBus() {
    return QDBusConnection::connectToBus(QStringLiteral("unix:path=/nonexistent/nicer-test-bus"),
                                         QStringLiteral("nicer-dead-bus"));
}

} // namespace

TEST_CASE("the window builds and explains that there is no session bus", "[tray]") {
    DaemonProxy daemon(deadBus());
    MainWindow window(daemon, false);
    QSignalSpy errors(&daemon, &DaemonProxy::errorOccurred);
    window.show();
    daemon.start(true);
    REQUIRE(errors.count() == 1);
    CHECK(window.errorText().contains("session bus"));
    CHECK(window.chart()->isVisible());
    CHECK_FALSE(window.pauseButton()->isEnabled());
    CHECK_FALSE(window.parameters()->isEnabled());
    CHECK_FALSE(window.pauseButton()->accessibleName().isEmpty());
    CHECK_FALSE(window.chart()->accessibleName().isEmpty());
}

TEST_CASE("the window follows the desktop's dark palette", "[tray]") {
    DaemonProxy daemon(deadBus());
    MainWindow window(daemon, false);
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x20, 0x22, 0x25));
    dark.setColor(QPalette::Base, QColor(0x18, 0x1a, 0x1c));
    dark.setColor(QPalette::Text, QColor(0xee, 0xee, 0xee));
    window.setPalette(dark);
    window.show();
    QCoreApplication::processEvents();
    CHECK(window.chart()->chart()->backgroundBrush().color() == QColor(0x18, 0x1a, 0x1c));
    CHECK(window.chart()->chart()->legend()->labelColor() == QColor(0xee, 0xee, 0xee));
}
