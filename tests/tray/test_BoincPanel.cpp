// The BOINC panel on its own: what it shows for a status, and how it asks and reports, with a request handler
// that answers at once (QDBusPendingCall::fromCompletedCall / fromError), so no bus is needed.
#include "tray/BoincAttachDialog.h"
#include "tray/BoincPanel.h"
#include "tray/BoincTestData.h"
#include "tray/LocaleGuard.h"

#include <QCoreApplication>
#include <QDBusError>
#include <QDBusMessage>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>
#include <QTextEdit>
#include <catch2/catch.hpp>

#include <vector>

using nicer::api::BoincStatus;
using nicer::tray::BoincAttachDialog;
using nicer::tray::BoincPanel;
using nicer::tray::BoincRequest;
using nicer::tray::test::kAsteroids;
using nicer::tray::test::kEinstein;
using nicer::tray::test::LocaleGuard;
using nicer::tray::test::realisticBoinc;

namespace {

using nicer::tray::test::kNow;
constexpr int kPanelWaitMs = 10'000; // a bound on a broken build, never a performance claim

QDBusPendingCall success() {
    return QDBusPendingCall::fromCompletedCall(
        QDBusMessage::createMethodCall("org.nicer.Daemon", "/org/nicer/Daemon", "org.nicer.Daemon1", "X")
            .createReply());
}

QDBusPendingCall failure(const QString& message) {
    return QDBusPendingCall::fromError(
        QDBusError(QDBusMessage::createError("org.nicer.Daemon1.Error.Failed", message)));
}

/// A handler that records what it was asked, and whether the dialog showed itself busy by then.
struct RecordingHandler {
    std::vector<BoincRequest> requests;
    std::vector<bool> dialogBusy;
    std::function<QDBusPendingCall()> answer = success;

    void install(BoincPanel& panel) {
        panel.setRequestHandler([this, &panel](const BoincRequest& r) {
            requests.push_back(r);
            dialogBusy.push_back(panel.attachDialog() && panel.attachDialog()->isBusy());
            return answer();
        });
    }
};

QProgressBar* bar(QTableWidget* table, int row, int column) {
    return qobject_cast<QProgressBar*>(table->cellWidget(row, column));
}

QAbstractButton* buttonWithRole(QMessageBox* box, QMessageBox::ButtonRole role) {
    for (QAbstractButton* b : box->buttons()) {
        if (box->buttonRole(b) == role) {
            return b;
        }
    }
    return nullptr;
}

} // namespace

TEST_CASE("while BOINC is off the panel is one line on how to start it", "[tray][boinc]") {
    BoincPanel panel;
    panel.setConnected(true);
    panel.show();
    CHECK_FALSE(panel.showsClient());
    CHECK(panel.offText().contains("choose the BOINC workload"));
    CHECK_FALSE(panel.systemServiceBox()->isVisible());
    QSignalSpy wanted(&panel, &BoincPanel::boincWorkloadRequested);
    auto* use = panel.findChild<QPushButton*>("useBoinc");
    REQUIRE(use != nullptr);
    CHECK(use->isEnabled());
    use->click();
    CHECK(wanted.count() == 1);

    // Without nicerd there is nothing to switch.
    panel.setConnected(false);
    CHECK_FALSE(use->isEnabled());
}

TEST_CASE("the system-wide client shows as a warning with its command to copy, also while BOINC is off",
          "[tray][boinc]") {
    BoincPanel panel;
    panel.show();
    BoincStatus off;
    off.systemService = nicer::tray::test::systemServiceAdvice();
    panel.setStatus(off, kNow);
    CHECK_FALSE(panel.showsClient());
    CHECK_FALSE(panel.offText().isEmpty());
    CHECK(panel.systemServiceBox()->isVisible());
    CHECK(panel.systemServiceText().contains("outside nicer's control"));
    QLineEdit* command = panel.systemServiceCommand();
    CHECK(command->isVisible());
    CHECK(command->isReadOnly());
    CHECK(command->text() == "sudo systemctl disable --now boinc-client.service");
    CHECK_FALSE(panel.systemServiceBox()->accessibleName().isEmpty());

    // With the client running, the warning stays above it; without the service, it goes.
    panel.setStatus(realisticBoinc(kNow, true), kNow);
    CHECK(panel.showsClient());
    CHECK(panel.systemServiceBox()->isVisible());
    panel.setStatus(realisticBoinc(kNow), kNow);
    CHECK_FALSE(panel.systemServiceBox()->isVisible());
    CHECK(panel.systemServiceText().isEmpty());
}

TEST_CASE("the panel shows the client's state, projects, tasks, transfers and notices", "[tray][boinc]") {
    const LocaleGuard locale;
    BoincPanel panel;
    panel.setConnected(true);
    panel.show();
    panel.setStatus(realisticBoinc(kNow), kNow);
    CHECK(panel.showsClient());
    CHECK(panel.offText().isEmpty());
    CHECK(panel.stateText() == "Running");
    CHECK(panel.preferencesText().startsWith("nicer's preferences are in force"));
    CHECK(panel.limitsText().startsWith("Downloads limited to 1.5 MiB/s and uploads to 256.0 KiB/s"));
    CHECK(panel.attachButton()->isEnabled());

    QTableWidget* projects = panel.projectsTable();
    REQUIRE(projects->rowCount() == 4);
    CHECK(projects->item(0, 0)->text() == "Einstein@Home");
    CHECK(projects->item(0, 1)->text() == "1,284,650");
    CHECK(projects->item(3, 0)->text() == kAsteroids);
    REQUIRE(panel.detachButton(0) != nullptr);
    CHECK(panel.detachButton(0)->isEnabled());
    CHECK(panel.detachButton(0)->accessibleName() == "Detach from Einstein@Home");

    QTableWidget* tasks = panel.tasksTable();
    REQUIRE(tasks->rowCount() == 6);
    CHECK(tasks->item(0, 0)->text() == "h1_0685.45_O3aM1__O3aSSB2b_685.60Hz_5_2");
    CHECK(tasks->item(0, 1)->text() == "Einstein@Home");
    CHECK(tasks->item(0, 2)->text() == "Running");
    REQUIRE(bar(tasks, 0, 3) != nullptr);
    CHECK(bar(tasks, 0, 3)->value() == 634);
    CHECK(bar(tasks, 0, 3)->text() == "63.4 %");
    CHECK(tasks->item(0, 4)->text() == "3 h 12 min");
    CHECK(tasks->item(0, 5)->text() == "1 h 51 min");
    // The deadlines: past and near ones stand out, the others do not.
    const auto background = [&](int row) { return tasks->item(row, 6)->background(); };
    CHECK(background(0).style() == Qt::NoBrush);
    CHECK(background(2).color() == QColor(0xf8, 0xd7, 0xda));
    CHECK(tasks->item(2, 6)->font().bold());
    CHECK(tasks->item(2, 6)->toolTip().contains("passed"));
    CHECK(background(3).color() == QColor(0xff, 0xf3, 0xcd));
    CHECK(tasks->item(3, 6)->toolTip().contains("less than a day"));
    CHECK_FALSE(tasks->item(0, 6)->font().bold());

    QTabWidget* lists = panel.lists();
    CHECK(lists->tabText(0) == "Tasks (6)");
    CHECK(lists->tabText(1) == "Projects (4)");
    CHECK(lists->tabText(2) == "Transfers (3)");
    CHECK(lists->tabText(3) == "Notices (4)");
    CHECK_FALSE(lists->tabIcon(3).isNull()); // one of them is an error
    QTableWidget* transfers = panel.transfersTable();
    REQUIRE(transfers->rowCount() == 3);
    CHECK(transfers->item(1, 2)->text().endsWith("Upload"));
    CHECK(bar(transfers, 0, 3)->text() == "9.5 MiB of 16.0 MiB");
    CHECK(transfers->item(0, 4)->text() == "1.2 MiB/s");
    CHECK(transfers->item(2, 4)->text() == "waiting");

    // Notices: latest first, the error marked, BOINC's text as it is (no markup taken from it).
    QTextEdit* notices = panel.noticesView();
    const QString text = notices->toPlainText();
    INFO(text.toStdString());
    CHECK(notices->isReadOnly());
    const auto latest =
        text.indexOf("nicer's preferences are in force: BOINC computes whenever nicer lets it");
    const auto error = text.indexOf(QString::fromUtf8("\u26a0 Error \u00b7 ") +
                                    nicer::tray::BoincModel::dateTimeText(kNow - 5 * 3600) +
                                    QString::fromUtf8(" \u00b7 Rosetta@home\nScheduler request failed"));
    const auto news = text.indexOf("New search: O3 all-sky\nThe search for continuous gravitational waves in "
                                   "LIGO's O3 data has begun. <Thanks> for your help!");
    const auto oldest = text.indexOf("Starting BOINC client version 7.20.5");
    CHECK(latest >= 0);
    CHECK(error > latest);
    CHECK(news > error);
    CHECK(oldest > news);
    CHECK(text.count("Error") == 1);

    for (QWidget* list : std::initializer_list<QWidget*>{projects, tasks, transfers, notices}) {
        CHECK_FALSE(list->accessibleName().isEmpty());
    }
    CHECK_FALSE(bar(tasks, 0, 3)->accessibleName().isEmpty());

    // The next read has fewer rows, no transfers, and a suspended client: the panel follows.
    BoincStatus later = realisticBoinc(kNow);
    later.state = nicer::api::BoincState::Suspended;
    later.detail = "the computer is in use";
    later.tasks.resize(2);
    later.transfers.clear();
    notices->moveCursor(QTextCursor::End);
    const auto readerAt = notices->textCursor().position();
    panel.setStatus(later, kNow);
    CHECK(panel.stateText() == "Suspended: the computer is in use");
    CHECK(tasks->rowCount() == 2);
    CHECK(transfers->rowCount() == 0);
    CHECK(lists->tabText(2) == "Transfers (0)");
    CHECK(lists->tabText(0) == "Tasks (2)");
    // The notices did not change: the document is not redrawn, and the reader keeps their place.
    CHECK(notices->textCursor().position() == readerAt);
    CHECK(notices->toPlainText() == text);
    CHECK(panel.attachButton()->isEnabled());

    // Held by nicer: frozen, nothing can be asked of it (nicerd would refuse), the lists stay.
    later.state = nicer::api::BoincState::Held;
    later.detail = "held: your programs need every CPU, nicer holds the work";
    panel.setStatus(later, kNow);
    CHECK(panel.stateText() == "Held: your programs need every CPU, nicer holds the work");
    CHECK(panel.showsClient());
    CHECK_FALSE(panel.attachButton()->isEnabled());
    CHECK(panel.attachButton()->toolTip().contains("nicer holds BOINC"));
    CHECK_FALSE(panel.detachButton(0)->isEnabled());
    CHECK(tasks->rowCount() == 2);

    // Starting: nothing to ask BOINC yet, and no limits to speak of.
    later.state = nicer::api::BoincState::Starting;
    panel.setStatus(later, kNow);
    CHECK(panel.stateText() == QString::fromUtf8("Starting\u2026"));
    CHECK_FALSE(panel.attachButton()->isEnabled());
    CHECK_FALSE(panel.detachButton(0)->isEnabled());
    CHECK(panel.limitsText().isEmpty());
}

TEST_CASE("a task's elapsed time shows against BOINC's limit, as a warning when it is close",
          "[tray][boinc]") {
    const LocaleGuard locale;
    BoincPanel panel;
    panel.setConnected(true);
    panel.show();
    BoincStatus s = realisticBoinc(kNow);
    s.tasks[0].elapsedSeconds = 80;
    s.tasks[0].elapsedLimitSeconds = 160;
    s.tasks[0].cpuSeconds = 62;
    s.tasks[1].elapsedSeconds = 2 * 3600 + 16 * 60; // 85% of the limit
    s.tasks[1].elapsedLimitSeconds = 2 * 3600 + 40 * 60;
    s.tasks[1].cpuSeconds = 2 * 3600 + 5 * 60;
    s.tasks[4].elapsedLimitSeconds = 8 * 3600; // ready to report: 7 h 58 min, past 80%, but over
    panel.setStatus(s, kNow);

    QTableWidget* tasks = panel.tasksTable();
    REQUIRE(tasks->rowCount() == 6);
    REQUIRE(tasks->horizontalHeaderItem(4)->text() == "Elapsed");
    const auto elapsed = [&](int row) { return tasks->item(row, 4); };
    CHECK(elapsed(0)->text() == "1 min 20 s of 2 min 40 s");
    CHECK(elapsed(0)->toolTip() ==
          "BOINC's clock: 1 min 20 s of the 2 min 40 s it allows before it aborts the task (50%); 1 min 2 s "
          "of CPU.");
    CHECK_FALSE(elapsed(0)->data(Qt::ForegroundRole).isValid());

    CHECK(elapsed(1)->text() == "2 h 16 min of 2 h 40 min");
    CHECK(elapsed(1)->toolTip().contains("(85%, close to the limit)"));
    REQUIRE(elapsed(1)->data(Qt::ForegroundRole).isValid());
    CHECK(elapsed(1)->foreground().color() == QColor(0xb3, 0x5c, 0x00));

    // No limit known: as before, the tooltip the text itself. A finished task: as before, never a warning.
    CHECK(elapsed(2)->text() == "2 h 40 min");
    CHECK(elapsed(2)->toolTip() == "2 h 40 min");
    CHECK(elapsed(4)->text() == "7 h 58 min");
    CHECK(elapsed(4)->toolTip() == "7 h 58 min");
    CHECK_FALSE(elapsed(4)->data(Qt::ForegroundRole).isValid());

    // The next read: the warned task's limit grew (BOINC re-estimated its speed), the first one finished.
    // The cells are reused: neither the colour nor the tooltip may stay from the last read.
    s.tasks[1].elapsedLimitSeconds = 8 * 3600;
    s.tasks[0].state = nicer::api::BoincTaskState::Uploading;
    panel.setStatus(s, kNow);
    CHECK(elapsed(1)->text() == "2 h 16 min of 8 h");
    CHECK_FALSE(elapsed(1)->data(Qt::ForegroundRole).isValid());
    CHECK_FALSE(elapsed(1)->toolTip().contains("close to the limit"));
    CHECK(elapsed(0)->text() == "1 min 20 s");
    CHECK(elapsed(0)->toolTip() == "1 min 20 s");
}

TEST_CASE("how nicer keeps BOINC's clock shows under the state, and only while it does", "[tray][boinc]") {
    BoincPanel panel;
    panel.setConnected(true);
    panel.show();
    BoincStatus s = realisticBoinc(kNow);
    panel.setStatus(s, kNow);
    CHECK(panel.clockText().isEmpty());
    const auto line = [&] {
        for (auto* label : panel.findChildren<QLabel*>()) {
            if (label->accessibleName() == "BOINC's clock") {
                return label;
            }
        }
        return static_cast<QLabel*>(nullptr);
    };
    REQUIRE(line() != nullptr);
    CHECK_FALSE(line()->isVisible());

    s.clock = "kept: BOINC counted 24% of the last minute; its tasks ran at 22% of their CPUs";
    panel.setStatus(s, kNow);
    CHECK(panel.clockText() ==
          "BOINC's clock: kept: BOINC counted 24% of the last minute; its tasks ran at 22% of their CPUs");
    CHECK(line()->isVisible());
    CHECK_FALSE(line()->toolTip().isEmpty());
    // Under the state line, above the preferences (once the layout has placed the line it just showed).
    QCoreApplication::processEvents();
    for (auto* label : panel.findChildren<QLabel*>()) {
        if (label->accessibleName() == "BOINC state") {
            CHECK(line()->y() > label->y());
        }
        if (label->accessibleName() == "BOINC preferences") {
            CHECK(line()->y() < label->y());
        }
    }

    // nicer leaves BOINC's clock alone again: the line goes.
    s.clock.clear();
    panel.setStatus(s, kNow);
    CHECK(panel.clockText().isEmpty());
    CHECK_FALSE(line()->isVisible());
}

TEST_CASE(
    "Attach sends the URL and key, shows the dialog busy, then nicerd's error in the dialog and the panel",
    "[tray][boinc]") {
    BoincPanel panel;
    RecordingHandler handler;
    handler.install(panel);
    panel.setConnected(true);
    panel.show();
    panel.setStatus(realisticBoinc(kNow), kNow);
    panel.attachButton()->click();
    BoincAttachDialog* dialog = panel.attachDialog();
    REQUIRE(dialog != nullptr);
    CHECK(dialog->isVisible());
    CHECK_FALSE(dialog->attachButton()->isEnabled()); // nothing filled in yet

    // Not a web address: the dialog says so and nothing is sent.
    dialog->urlEdit()->setText("einsteinathome");
    dialog->keyEdit()->setText("0123abcd");
    REQUIRE(dialog->attachButton()->isEnabled());
    dialog->attachButton()->click();
    CHECK(handler.requests.empty());
    CHECK(dialog->statusText().contains("starting with https://"));

    handler.answer = [] { return failure("BOINC refused the account key: invalid"); };
    dialog->urlEdit()->setText(QString(" ") + kEinstein);
    dialog->attachButton()->click();
    REQUIRE(handler.requests.size() == 1);
    CHECK(handler.requests[0].kind == BoincRequest::Kind::Attach);
    CHECK(handler.requests[0].url == kEinstein);
    CHECK(handler.requests[0].key == "0123abcd");
    CHECK(handler.dialogBusy[0]);
    CHECK(dialog->isBusy());
    CHECK_FALSE(dialog->attachButton()->isEnabled());
    CHECK(panel.actionText().startsWith("Attaching to https://einsteinathome.org/"));
    REQUIRE(QTest::qWaitFor([&] { return !dialog->isBusy(); }, kPanelWaitMs));
    CHECK(dialog->statusIsError());
    CHECK(dialog->statusText() ==
          "Could not attach to https://einsteinathome.org/: BOINC refused the account key: invalid");
    CHECK(panel.actionText() == dialog->statusText());
    CHECK(panel.actionIsError());
    CHECK(dialog->keyEdit()->text() == "0123abcd"); // kept for another try
    CHECK(dialog->attachButton()->isEnabled());

    // The volunteer closes the dialog before BOINC answers: the answer still shows, in the panel and in the
    // dialog when it opens again; the key, used, is cleared.
    handler.answer = [&] {
        dialog->close();
        return success();
    };
    dialog->attachButton()->click();
    REQUIRE(handler.requests.size() == 2);
    CHECK_FALSE(dialog->isVisible());
    REQUIRE(QTest::qWaitFor([&] { return !dialog->isBusy(); }, kPanelWaitMs));
    CHECK(panel.actionText().startsWith("Attached to https://einsteinathome.org/"));
    CHECK_FALSE(panel.actionIsError());
    panel.openAttachDialog();
    CHECK(panel.attachDialog() == dialog);
    CHECK(dialog->statusText() == panel.actionText());
    CHECK(dialog->keyEdit()->text().isEmpty());
}

TEST_CASE("an account manager is attached with its URL, name and a masked password", "[tray][boinc]") {
    BoincPanel panel;
    RecordingHandler handler;
    handler.install(panel);
    panel.setConnected(true);
    panel.show();
    panel.setStatus(realisticBoinc(kNow), kNow);
    panel.openAttachDialog();
    BoincAttachDialog* dialog = panel.attachDialog();
    dialog->setAccountManagerMode(true);
    CHECK(dialog->passwordEdit()->echoMode() == QLineEdit::Password);
    dialog->urlEdit()->setText("https://bam.boincstats.com/");
    dialog->nameEdit()->setText("volunteer@example.org");
    CHECK_FALSE(dialog->attachButton()->isEnabled()); // no password yet
    dialog->passwordEdit()->setText("s3cret pass");
    dialog->attachButton()->click();
    REQUIRE(handler.requests.size() == 1);
    CHECK(handler.requests[0].kind == BoincRequest::Kind::AttachAccountManager);
    CHECK(handler.requests[0].url == "https://bam.boincstats.com/");
    CHECK(handler.requests[0].name == "volunteer@example.org");
    CHECK(handler.requests[0].password == "s3cret pass");
    REQUIRE(QTest::qWaitFor([&] { return !dialog->isBusy(); }, kPanelWaitMs));
    CHECK(dialog->statusText().startsWith("Attached to the account manager"));
    CHECK(dialog->passwordEdit()->text().isEmpty());
}

TEST_CASE("Detach asks first, and sends only on yes", "[tray][boinc]") {
    BoincPanel panel;
    RecordingHandler handler;
    handler.install(panel);
    panel.setConnected(true);
    panel.show();
    panel.setStatus(realisticBoinc(kNow), kNow);

    panel.detachButton(0)->click();
    QMessageBox* box = panel.detachConfirmation();
    REQUIRE(box != nullptr);
    CHECK(box->isVisible());
    CHECK(box->text().contains("Einstein@Home"));
    CHECK(box->informativeText().contains("dropped"));
    buttonWithRole(box, QMessageBox::RejectRole)->click();
    CHECK(handler.requests.empty());

    handler.answer = [] { return failure("no such project"); };
    panel.detachButton(0)->click();
    box = panel.detachConfirmation();
    REQUIRE(box != nullptr);
    QAbstractButton* detach = buttonWithRole(box, QMessageBox::DestructiveRole);
    REQUIRE(detach != nullptr);
    detach->click();
    REQUIRE(handler.requests.size() == 1);
    CHECK(handler.requests[0].kind == BoincRequest::Kind::Detach);
    CHECK(handler.requests[0].url == kEinstein);
    // Until nicerd answers, the project's button says so and cannot be pressed twice.
    CHECK_FALSE(panel.detachButton(0)->isEnabled());
    CHECK(panel.detachButton(0)->text().startsWith("Detaching"));
    CHECK(panel.detachButton(1)->isEnabled());
    CHECK(panel.actionText().startsWith("Detaching from Einstein@Home"));
    REQUIRE(QTest::qWaitFor([&] { return panel.detachButton(0)->isEnabled(); }, kPanelWaitMs));
    CHECK(panel.actionText() == "Could not detach from Einstein@Home: no such project");
    CHECK(panel.actionIsError());

    // Without nicerd, nothing can be asked.
    panel.setConnected(false);
    CHECK_FALSE(panel.detachButton(0)->isEnabled());
    CHECK_FALSE(panel.attachButton()->isEnabled());
}
