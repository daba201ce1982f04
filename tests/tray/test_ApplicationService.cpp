#include "tray/ApplicationService.h"
#include "tray/PrivateBus.h"
#include "tray/TrayTestSupport.h"

#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QTest>
#include <QWidget>
#include <catch2/catch.hpp>

using nicer::tray::ApplicationService;
using nicer::tray::test::deadBus;
using nicer::tray::test::PrivateBus;

namespace {

using nicer::tray::test::kBusWaitMs;

} // namespace

TEST_CASE("Activate brings the window forward", "[tray][single-instance]") {
    ApplicationService service(deadBus());
    QWidget window;
    service.setWindow(&window);
    REQUIRE_FALSE(window.isVisible());
    service.Activate({});
    CHECK(window.isVisible());
    window.showMinimized();
    service.Open({"file:///tmp/x"}, {});
    CHECK(window.isVisible());
    CHECK_FALSE(window.isMinimized());
}

TEST_CASE("an activation before the window exists shows it once it does", "[tray][single-instance]") {
    ApplicationService service(deadBus());
    service.ActivateAction("open", {}, {});
    QWidget window;
    service.setWindow(&window);
    CHECK(window.isVisible());
}

TEST_CASE("the desktop entry's quit action asks the tray to quit and shows nothing",
          "[tray][single-instance]") {
    ApplicationService service(deadBus());
    QWidget window;
    service.setWindow(&window);
    int quits = 0;
    QObject::connect(&service, &ApplicationService::quitRequested, [&] { ++quits; });
    service.ActivateAction(ApplicationService::kQuitAction, {}, {});
    CHECK(quits == 1);
    CHECK_FALSE(window.isVisible());
}

TEST_CASE("without a session bus nicer-tray runs alone and says why", "[tray][single-instance]") {
    ApplicationService service(deadBus());
    CHECK(service.claim() == ApplicationService::Claim::NoBus);
    CHECK(service.claimError().contains("session bus"));
}

TEST_CASE("the first claims org.nicer.Tray, the second finds it and its Activate shows the first's window",
          "[tray][single-instance]") {
    PrivateBus bus;
    QDBusConnection first = bus.connect("first");
    QDBusConnection second = bus.connect("second");
    ApplicationService primary(first);
    REQUIRE(primary.claim() == ApplicationService::Claim::Primary);
    QWidget window;
    primary.setWindow(&window);

    ApplicationService other(second);
    CHECK(other.claim() == ApplicationService::Claim::AlreadyRunning);

    // What activateRunning() sends, but asynchronously: both ends live in this one thread.
    auto call = QDBusMessage::createMethodCall(ApplicationService::kBusName, ApplicationService::kObjectPath,
                                               ApplicationService::kInterface, "Activate");
    call << QVariantMap{};
    QDBusPendingCallWatcher reply(second.asyncCall(call));
    REQUIRE(QTest::qWaitFor([&] { return reply.isFinished(); }, kBusWaitMs));
    INFO(reply.error().message().toStdString());
    CHECK_FALSE(reply.isError());
    CHECK(window.isVisible());
}
