// The BOINC tab against nicerd's own D-Bus service (dbus::DaemonService) over a fake nicerd
// (tests/dbus/DbusTestSupport.h), on a private bus: the tray reads the wire format nicerd writes, and its
// requests reach nicerd with their fields. No BOINC client is needed. The [xvfb] case saves the screenshot of
// the tab for the docs (tests/harness/xvfb-tray-host.sh runs it on a real X server).
#include "control/ParameterTable.h"
#include "tray/BoincAttachDialog.h"
#include "tray/BoincPanel.h"
#include "tray/BoincTestData.h"
#include "tray/DaemonProxy.h"
#include "tray/MainWindow.h"
#include "tray/TrayOnFakeNicerd.h"

#include <QAbstractButton>
#include <QDateTime>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QStringList>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>
#include <QTextEdit>
#include <catch2/catch.hpp>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

using nicer::dbus::test::FakeDaemon;
using nicer::tray::BoincPanel;
using nicer::tray::DaemonProxy;
using nicer::tray::test::kEinstein;
using nicer::tray::test::realisticBoinc;

namespace {

constexpr int kWaitMs = nicer::tray::test::kFakeNicerdWaitMs;

/// The window on a fake nicerd whose BOINC client reports @p boinc.
struct TrayWithBoinc : nicer::tray::test::TrayOnFakeNicerd {
    TrayWithBoinc(const nicer::api::BoincStatus& boinc, const QString& name)
        : TrayOnFakeNicerd(name, [&](FakeDaemon& f) { f.state_.boinc = boinc; }) {}

    BoincPanel* panel() const { return window.boinc(); }
    template <typename F>
    void changeBoinc(F&& f) {
        change([&](FakeDaemon& nicerd) { f(nicerd.state_.boinc); });
    }
    std::vector<std::string> requests() {
        std::lock_guard lock(fake.mutex);
        return fake.boincRequests;
    }
};

QProgressBar* taskBar(BoincPanel* panel, int row) {
    return qobject_cast<QProgressBar*>(panel->tasksTable()->cellWidget(row, 3));
}

} // namespace

TEST_CASE("the BOINC tab shows nicerd's client, follows what nicerd announces, and Attach reaches nicerd",
          "[tray][boinc]") {
    const std::int64_t now = QDateTime::currentSecsSinceEpoch();
    TrayWithBoinc tray(realisticBoinc(now), QStringLiteral("nicer-boinc-tray"));
    BoincPanel* panel = tray.panel();

    // Every controller parameter is published (SetParameters sends only those).
    CHECK(tray.daemon.properties().publishedParameters.size() ==
          static_cast<int>(nicer::control::parameterTable().size()));
    // Its lists were read once, with the other properties, before the tab shows.
    REQUIRE(panel->tasksTable()->rowCount() == 6);
    CHECK(panel->tasksTable()->item(0, 0)->text() == "h1_0685.45_O3aM1__O3aSSB2b_685.60Hz_5_2");
    CHECK(panel->tasksTable()->item(0, 1)->text() == "Einstein@Home");
    REQUIRE(taskBar(panel, 0) != nullptr);
    CHECK(taskBar(panel, 0)->value() == 634);
    CHECK(taskBar(panel, 0)->text() == "63.4 %");
    CHECK(panel->projectsTable()->rowCount() == 4);
    CHECK(panel->noticesView()->toPlainText().contains("Scheduler request failed: HTTP service unavailable"));
    CHECK(panel->stateText() == "Running");

    tray.window.tabs()->setCurrentWidget(panel);

    // A list changes: nicerd announces it at its next period.
    tray.changeBoinc([](auto& b) { b.tasks[0].fractionDone = 0.75; });
    tray.service->run([](auto& service) { service.announceChanges(); });
    REQUIRE(QTest::qWaitFor([&] { return taskBar(panel, 0)->value() == 750; }, kWaitMs));

    // The state is announced at once.
    tray.changeBoinc([](auto& b) {
        b.state = nicer::api::BoincState::Suspended;
        b.detail = "the computer is on batteries";
    });
    tray.service->run([](auto& service) { service.onStateChanged(); });
    REQUIRE(QTest::qWaitFor([&] { return panel->stateText() == "Suspended: the computer is on batteries"; },
                            kWaitMs));

    // How nicer keeps BOINC's clock (BoincClock), and a task's CPU time and elapsed-time limit (BoincTasks).
    tray.changeBoinc([](auto& b) {
        b.clock = "kept: BOINC counted 24% of the last minute; its tasks ran at 22% of their CPUs";
        b.tasks[0].elapsedSeconds = 80;
        b.tasks[0].elapsedLimitSeconds = 160;
        b.tasks[0].cpuSeconds = 62;
    });
    tray.service->run([](auto& service) { service.announceChanges(); });
    const auto elapsed = [&] { return panel->tasksTable()->item(0, 4); };
    REQUIRE(QTest::qWaitFor(
        [&] { return !panel->clockText().isEmpty() && elapsed()->text() == "1 min 20 s of 2 min 40 s"; },
        kWaitMs));
    CHECK(panel->clockText() ==
          "BOINC's clock: kept: BOINC counted 24% of the last minute; its tasks ran at 22% of their CPUs");
    CHECK(elapsed()->toolTip().endsWith("(50%); 1 min 2 s of CPU."));
    tray.changeBoinc([](auto& b) { b.clock.clear(); });
    tray.service->run([](auto& service) { service.announceChanges(); });
    REQUIRE(QTest::qWaitFor([&] { return panel->clockText().isEmpty(); }, kWaitMs));

    // Attach: the URL and the key reach nicerd, and its answer comes back to the dialog.
    panel->attachButton()->click();
    auto* dialog = panel->attachDialog();
    REQUIRE(dialog != nullptr);
    dialog->urlEdit()->setText("https://boinc.bakerlab.org/rosetta/");
    dialog->keyEdit()->setText("5f4dcc3b5aa765d61d8327deb882cf99");
    dialog->attachButton()->click();
    REQUIRE(QTest::qWaitFor([&] { return !dialog->isBusy(); }, kWaitMs));
    INFO(dialog->statusText().toStdString());
    CHECK_FALSE(dialog->statusIsError());
    CHECK(dialog->statusText().startsWith("Attached to https://boinc.bakerlab.org/rosetta/"));
    CHECK(tray.requests() ==
          std::vector<std::string>{
              "attach https://boinc.bakerlab.org/rosetta/ 5f4dcc3b5aa765d61d8327deb882cf99"});

    // BOINC says no: nicerd's message, in the dialog and in the panel.
    {
        std::lock_guard lock(tray.fake.mutex);
        tray.fake.boincRefusal = "the project says: invalid account key";
    }
    dialog->keyEdit()->setText("wrong");
    dialog->attachButton()->click();
    REQUIRE(QTest::qWaitFor([&] { return !dialog->isBusy(); }, kWaitMs));
    CHECK(dialog->statusIsError());
    CHECK(dialog->statusText().endsWith("the project says: invalid account key"));
    CHECK(panel->actionText() == dialog->statusText());
    dialog->close();

    // An account manager, with its password.
    {
        std::lock_guard lock(tray.fake.mutex);
        tray.fake.boincRefusal.clear();
    }
    panel->openAttachDialog();
    dialog->setAccountManagerMode(true);
    dialog->urlEdit()->setText("https://bam.boincstats.com/");
    dialog->nameEdit()->setText("volunteer");
    dialog->passwordEdit()->setText("hunter2");
    dialog->attachButton()->click();
    REQUIRE(QTest::qWaitFor([&] { return !dialog->isBusy(); }, kWaitMs));
    CHECK_FALSE(dialog->statusIsError());
    dialog->close();

    // Detach, once confirmed.
    panel->detachButton(0)->click();
    QMessageBox* box = panel->detachConfirmation();
    REQUIRE(box != nullptr);
    for (QAbstractButton* b : box->buttons()) {
        if (box->buttonRole(b) == QMessageBox::DestructiveRole) {
            b->click();
        }
    }
    REQUIRE(QTest::qWaitFor([&] { return panel->actionText().startsWith("Detached from Einstein@Home"); },
                            kWaitMs));
    const auto requests = tray.requests();
    REQUIRE(requests.size() == 4);
    CHECK(requests[2] == "manager https://bam.boincstats.com/ volunteer hunter2");
    CHECK(requests[3] == std::string("detach ") + kEinstein);

    // BOINC off: the tab says how to start it.
    tray.changeBoinc([](auto& b) { b = nicer::api::BoincStatus{}; });
    tray.service->run([](auto& service) { service.onStateChanged(); });
    REQUIRE(QTest::qWaitFor([&] { return !panel->showsClient(); }, kWaitMs));
    CHECK(panel->offText().contains("choose the BOINC workload"));
    // Everything after the first read came by PropertiesChanged, the requests' outcomes too.
    CHECK(tray.service->getAllCalls() == 1);
}

TEST_CASE("without nicerd the BOINC tab forgets its client", "[tray][boinc]") {
    TrayWithBoinc tray(realisticBoinc(QDateTime::currentSecsSinceEpoch()),
                       QStringLiteral("nicer-boinc-gone"));
    BoincPanel* panel = tray.panel();
    tray.window.tabs()->setCurrentWidget(panel);
    tray.service.reset(); // its connection closes, and the name with it
    REQUIRE(QTest::qWaitFor([&] { return !tray.daemon.isConnected(); }, kWaitMs));
    CHECK_FALSE(panel->showsClient());
    CHECK(panel->tasksTable()->rowCount() == 0);
    CHECK_FALSE(panel->findChild<QPushButton*>("useBoinc")->isEnabled());
}

TEST_CASE("the BOINC tab with a volunteer's projects, tasks, transfers and notices (screenshot)",
          "[xvfb][boinc]") {
    const std::int64_t now = QDateTime::currentSecsSinceEpoch();
    TrayWithBoinc tray(realisticBoinc(now, true), QStringLiteral("nicer-boinc-screenshot"));
    // The fake nicerd reports a placeholder LastError and the duty-cycle actuator (whose notice is about the
    // cpu controller); a volunteer's nicerd has neither. Once the window shows both (it has read nicerd's
    // properties), it stops listening to the rest, and those two bars are hidden for the picture.
    const auto shows = [&](const QString& name) {
        const auto labels = tray.window.findChildren<QLabel*>();
        return std::any_of(labels.begin(), labels.end(), [&](const QLabel* label) {
            return label->accessibleName() == name && !label->text().isEmpty();
        });
    };
    REQUIRE(QTest::qWaitFor([&] { return shows(QStringLiteral("Error")) && shows(QStringLiteral("Notice")); },
                            kWaitMs));
    QObject::disconnect(&tray.daemon, &DaemonProxy::propertiesChanged, &tray.window, nullptr);
    QObject::disconnect(&tray.daemon, &DaemonProxy::errorOccurred, &tray.window, nullptr);
    for (QLabel* label : tray.window.findChildren<QLabel*>()) {
        if (label->accessibleName() == QLatin1String("Error")) {
            label->parentWidget()->hide();
        } else if (label->accessibleName() == QLatin1String("Notice")) {
            label->hide();
        }
    }
    tray.window.tabs()->setCurrentWidget(tray.panel());
    REQUIRE(QTest::qWaitForWindowExposed(&tray.window));
    REQUIRE(QTest::qWaitFor([&] { return tray.panel()->tasksTable()->isVisible(); }, kWaitMs));
    QTest::qWait(200); // let the tables settle their column widths before the picture
    QDir().mkpath(NICER_SCREENSHOT_DIR);
    const QString path = QStringLiteral(NICER_SCREENSHOT_DIR "/nicer-tray-boinc.png");
    INFO(path.toStdString());
    CHECK(tray.window.grab().save(path));
    // The other lists, for a look at them (not in the docs).
    const QStringList others{"projects", "transfers", "notices"};
    for (int i = 0; i < others.size(); ++i) {
        tray.panel()->lists()->setCurrentIndex(i + 1);
        QTest::qWait(100);
        CHECK(tray.window.grab().save(
            QStringLiteral(NICER_SCREENSHOT_DIR "/nicer-tray-boinc-%1.png").arg(others[i])));
    }
    // The attach dialog while BOINC has not answered, and the tab while BOINC is off.
    tray.panel()->openAttachDialog();
    auto* dialog = tray.panel()->attachDialog();
    dialog->urlEdit()->setText("https://www.gpugrid.net/");
    dialog->keyEdit()->setText("5f4dcc3b5aa765d61d8327deb882cf99");
    dialog->setBusy(
        "Attaching to https://www.gpugrid.net/\u2026 BOINC answers once it has read the project's web "
        "site (up to 2 minutes).");
    QTest::qWait(100);
    CHECK(dialog->grab().save(NICER_SCREENSHOT_DIR "/nicer-tray-boinc-attach.png"));
    dialog->showResult(false,
                       "Could not attach to https://www.gpugrid.net/: the project says: invalid account key");
    QTest::qWait(100);
    CHECK(dialog->grab().save(NICER_SCREENSHOT_DIR "/nicer-tray-boinc-attach-error.png"));
    dialog->close();
    tray.panel()->setStatus(nicer::api::BoincStatus{});
    QTest::qWait(100);
    CHECK(tray.window.grab().save(NICER_SCREENSHOT_DIR "/nicer-tray-boinc-off.png"));
}
