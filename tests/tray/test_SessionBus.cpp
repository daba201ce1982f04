// The tray across restarts of the session bus: a private dbus-daemon (tray/PrivateBus.h) killed at random
// moments and started again at the same address, with a fake nicerd (nicerd's own D-Bus service over
// FakeDaemon, tests/dbus/DbusTestSupport.h) published again on each new bus, as nicerd would come back.
#include "DbusTestSupport.h"
#include "tray/ApplicationService.h"
#include "tray/Autostart.h"
#include "tray/DaemonProxy.h"
#include "tray/MainWindow.h"
#include "tray/PrivateBus.h"
#include "tray/SessionBus.h"

#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QWidget>
#include <catch2/catch.hpp>

#include <optional>
#include <random>

using nicer::dbus::test::FakeDaemon;
using nicer::dbus::test::ServedService;
using nicer::tray::ApplicationService;
using nicer::tray::Autostart;
using nicer::tray::DaemonProxy;
using nicer::tray::MainWindow;
using nicer::tray::SessionBus;
using nicer::tray::test::PrivateBus;

namespace {

using nicer::tray::test::kBusWaitMs;
constexpr int kRestarts = 20;

/// The tray's proxy and window on a SessionBus to a private bus that the test kills and starts again, and
/// the fake nicerd on its own connection to it.
struct TrayOnRestartingBus {
    TrayOnRestartingBus()
        : session(bus.address())
        , daemon(session)
        , window(daemon, false, Autostart(home.filePath("autostart"))) {}

    /// nicerd takes its name on the bus that runs now.
    void publishNicerd() {
        nicerd.emplace(nicer::dbus::test::PrivateBus::connectTo(bus.address().toStdString()), fake);
    }
    /// The value beside @p name in the window's overview ("Your programs", "Overloads", ...): the field of
    /// its form row (the name's own label, the chart's key, carries the same accessible name).
    QString value(const QString& name) const {
        for (auto* form : window.findChildren<QFormLayout*>()) {
            for (int row = 0; row < form->rowCount(); ++row) {
                QLayoutItem* field = form->itemAt(row, QFormLayout::FieldRole);
                auto* label = field != nullptr ? qobject_cast<QLabel*>(field->widget()) : nullptr;
                if (label != nullptr && label->accessibleName() == name) {
                    return label->text();
                }
            }
        }
        return QStringLiteral("(no such value)");
    }
    QPushButton* startButton() const {
        for (auto* button : window.findChildren<QPushButton*>()) {
            if (button->text() == QLatin1String("Start nicerd")) {
                return button;
            }
        }
        return nullptr;
    }

    QTemporaryDir home;
    PrivateBus bus;
    FakeDaemon fake;
    std::optional<ServedService> nicerd; ///< reset when its bus dies: it served a closed connection
    SessionBus session;
    DaemonProxy daemon;
    MainWindow window;
};

/// Asks the owner of org.nicer.Tray on @p observer to Activate, without blocking (the owner is this thread).
bool activateOver(const QDBusConnection& observer) {
    auto call = QDBusMessage::createMethodCall(ApplicationService::kBusName, ApplicationService::kObjectPath,
                                               ApplicationService::kInterface, "Activate");
    call << QVariantMap{};
    QDBusPendingCallWatcher reply(observer.asyncCall(call));
    REQUIRE(QTest::qWaitFor([&] { return reply.isFinished(); }, kBusWaitMs));
    INFO(reply.error().message().toStdString());
    return !reply.isError();
}

QString trayNameOwner(const QDBusConnection& observer) {
    return observer.interface()->serviceOwner(ApplicationService::kBusName).value();
}

} // namespace

TEST_CASE("the tray follows nicerd again after the session bus restarts", "[tray][session-bus]") {
    const auto seed = std::random_device{}();
    INFO("random seed " << seed);
    std::mt19937 random(seed);
    const auto chance = [&] { return std::bernoulli_distribution(0.5)(random); };
    const auto someMs = [&](int most) { return std::uniform_int_distribution<int>(0, most)(random); };

    TrayOnRestartingBus tray;
    tray.publishNicerd();
    tray.window.show();
    QSignalSpy busChanges(&tray.daemon, &DaemonProxy::busChanged);
    QSignalSpy history(&tray.daemon, &DaemonProxy::historyReceived);
    QSignalSpy properties(&tray.daemon, &DaemonProxy::propertiesChanged);
    QSignalSpy samples(&tray.daemon, &DaemonProxy::sampleReceived);
    // What arrives once the bus is back is the new bus's, never an answer that was on its way before.
    QObject::connect(&tray.daemon, &DaemonProxy::busChanged, [&](bool present) {
        if (present) {
            history.clear();
            properties.clear();
            samples.clear();
        }
    });
    tray.daemon.start(false);
    REQUIRE(QTest::qWaitFor([&] { return tray.daemon.isConnected() && history.count() > 0; }, kBusWaitMs));

    for (int restart = 1; restart <= kRestarts; ++restart) {
        INFO("restart " << restart);
        // The kill lands at a random moment: right after the tray (re)connected, while it reads nicerd's
        // state, or with samples on their way.
        for (int i = someMs(3); i > 0; --i) {
            tray.nicerd->run([](auto& service) {
                service.onSample(
                    nicer::api::Sample{7, 0.5, 0.2, 0.3, 0.1, 0.3, 2.0, 0, false, true, 64.0, "game"});
            });
            QTest::qWait(someMs(150));
        }
        if (chance()) {
            tray.daemon.refreshProperties();
        }
        tray.bus.kill();
        tray.nicerd.reset();

        // Sometimes the bus is back before the tray noticed that it went; else the tray says it waits.
        if (chance()) {
            REQUIRE(QTest::qWaitFor([&] { return busChanges.count() == 2 * restart - 1; }, kBusWaitMs));
            CHECK_FALSE(tray.daemon.isConnected());
            CHECK_FALSE(tray.daemon.hasBus());
            CHECK(tray.daemon.view().busGone);
            CHECK_FALSE(tray.daemon.lastSample().has_value());
            CHECK(tray.value("Your programs") == "-"); // no stale numbers
            CHECK(tray.value("Overloads") == "-");
            CHECK(tray.window.errorText().contains(
                "The session bus is gone, so nicer-tray cannot reach nicerd: "
                "waiting for the bus to come back."));
            REQUIRE(tray.startButton() != nullptr);
            CHECK_FALSE(tray.startButton()->isVisible()); // no bus to start nicerd on
            CHECK_FALSE(tray.window.pauseButton()->isEnabled());
            QTest::qWait(someMs(300));
        }
        tray.bus.start();
        // nicerd may take its name on the new bus before the tray connects to it, or after.
        const bool nicerdFirst = chance();
        if (nicerdFirst) {
            tray.publishNicerd();
        }
        REQUIRE(QTest::qWaitFor([&] { return busChanges.count() == 2 * restart; }, kBusWaitMs));
        CHECK(busChanges.at(2 * restart - 2).at(0).toBool() == false);
        CHECK(busChanges.at(2 * restart - 1).at(0).toBool() == true);
        if (!nicerdFirst) {
            QTest::qWait(someMs(200));
            tray.publishNicerd();
        }
        REQUIRE(QTest::qWaitFor(
            [&] { return tray.daemon.isConnected() && history.count() > 0 && properties.count() > 0; },
            kBusWaitMs));
        CHECK(tray.daemon.hasBus());
        // What a tray shows for this nicerd: its LastError (the fake's), not the bus or "not running".
        CHECK(tray.window.errorText() == "<b>nicerd reports:</b> the last error");
        CHECK(tray.window.pauseButton()->isEnabled());
        CHECK(tray.daemon.properties().state.actuator == nicer::api::Actuator::SignalDutyCycle);
        CHECK(tray.daemon.properties().state.cpuCount == 4);
        // Samples flow again on the new bus (sent until one arrives: the tray's match may follow the name a
        // moment after nicerd took it).
        const std::uint64_t time = 1'000'000ull * static_cast<std::uint64_t>(restart);
        REQUIRE(QTest::qWaitFor(
            [&] {
                tray.nicerd->run([time](auto& service) {
                    service.onSample(
                        nicer::api::Sample{time, 0.4, 0.1, 0.5, 0.0, 0.5, 1.0, 0, false, true, 50.0, ""});
                });
                QTest::qWait(20);
                return tray.daemon.lastSample() && tray.daemon.lastSample()->timeUSec == time;
            },
            kBusWaitMs));
        CHECK(samples.count() > 0);
        CHECK(tray.value("Your programs") == "10.0 %");
    }
    CHECK(busChanges.count() == 2 * kRestarts);
}

TEST_CASE("after the session bus restarts without nicerd the window says nicerd is not running",
          "[tray][session-bus]") {
    TrayOnRestartingBus tray;
    tray.publishNicerd();
    tray.window.show();
    QSignalSpy busChanges(&tray.daemon, &DaemonProxy::busChanged);
    tray.daemon.start(false);
    REQUIRE(QTest::qWaitFor([&] { return tray.daemon.isConnected(); }, kBusWaitMs));

    tray.bus.kill();
    tray.nicerd.reset();
    REQUIRE(QTest::qWaitFor([&] { return busChanges.count() == 1; }, kBusWaitMs));
    CHECK(tray.window.errorText().contains("The session bus is gone"));

    tray.bus.start();
    REQUIRE(QTest::qWaitFor([&] { return busChanges.count() == 2; }, kBusWaitMs));
    // The bus message does not outlive the bus's return: nicerd's own state replaces it.
    REQUIRE(QTest::qWaitFor([&] { return tray.window.errorText().contains("nicerd is not running"); },
                            kBusWaitMs));
    CHECK_FALSE(tray.window.errorText().contains("session bus"));
    REQUIRE(tray.startButton() != nullptr);
    CHECK(tray.startButton()->isVisible());
}

TEST_CASE("nicer-tray claims org.nicer.Tray again after the session bus restarts", "[tray][session-bus]") {
    PrivateBus bus;
    SessionBus session(bus.address());
    ApplicationService service(session);
    REQUIRE(service.claim() == ApplicationService::Claim::Primary);
    QWidget window;
    service.setWindow(&window);
    QSignalSpy reconnected(&session, &SessionBus::reconnected);
    QSignalSpy disconnected(&session, &SessionBus::disconnected);
    QSignalSpy taken(&service, &ApplicationService::nameTaken);

    for (int restart = 1; restart <= 5; ++restart) {
        INFO("restart " << restart);
        bus.kill();
        if (restart % 2 == 0) {
            REQUIRE(QTest::qWaitFor([&] { return disconnected.count() == restart; }, kBusWaitMs));
        }
        bus.start();
        REQUIRE(QTest::qWaitFor([&] { return reconnected.count() == restart; }, kBusWaitMs));
        const QDBusConnection observer = bus.connect(QStringLiteral("observer-%1").arg(restart));
        REQUIRE(observer.isConnected());
        CHECK(trayNameOwner(observer) == session.connection().baseService());
        // The object is served again too: a second launch's Activate shows the window.
        window.hide();
        CHECK(activateOver(observer));
        CHECK(window.isVisible());
    }
    CHECK(taken.isEmpty());
}

TEST_CASE("a nicer-tray that finds its name taken after the session bus restarts says so",
          "[tray][session-bus]") {
    PrivateBus bus;
    SessionBus session(bus.address());
    ApplicationService service(session);
    REQUIRE(service.claim() == ApplicationService::Claim::Primary);
    QSignalSpy disconnected(&session, &SessionBus::disconnected);
    QSignalSpy taken(&service, &ApplicationService::nameTaken);

    bus.kill();
    REQUIRE(QTest::qWaitFor([&] { return disconnected.count() == 1; }, kBusWaitMs));
    bus.start();
    // A new nicer-tray starts on the new bus before the first one is back on it (nothing here runs the event
    // loop, so the first one's next attempt comes after this claim).
    const QDBusConnection other = bus.connect(QStringLiteral("other"));
    ApplicationService second(other);
    REQUIRE(second.claim() == ApplicationService::Claim::Primary);

    REQUIRE(QTest::qWaitFor([&] { return taken.count() == 1; }, kBusWaitMs));
    CHECK(taken.at(0).at(0).toString() ==
          "another nicer-tray took the name org.nicer.Tray while the session bus was gone");
    CHECK(session.isConnected());
    CHECK(trayNameOwner(other) == other.baseService());
}
