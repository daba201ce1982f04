#include "tray/BoincPanel.h"

#include "api/BusNames.h"
#include "tray/BoincAttachDialog.h"

#include <QApplication>
#include <QClipboard>
#include <QDBusError>
#include <QDBusPendingCallWatcher>
#include <QDateTime>
#include <QFontDatabase>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QStyle>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextEdit>
#include <QVBoxLayout>

#include <algorithm>
#include <chrono>

namespace nicer::tray {

namespace {

enum ProjectColumn { kProjectName, kUserCredit, kHostCredit, kRecentCredit, kProjectStatus, kProjectAction };
enum TaskColumn { kTaskName, kTaskProject, kTaskState, kTaskProgress, kElapsed, kRemaining, kDeadline };
enum TransferColumn { kFile, kTransferProject, kDirection, kTransferProgress, kRate };
enum ListTab { kTasksTab, kProjectsTab, kTransfersTab, kNoticesTab };

// The widest a project column grows by itself (a URL while the name is unknown).
constexpr int kProjectColumnMaxWidth = 170;

// Colours that read the same on a light and a dark palette: each sets its text and its background.
const QColor kPastBackground(0xf8, 0xd7, 0xda);
const QColor kPastText(0x84, 0x20, 0x29);
const QColor kSoonBackground(0xff, 0xf3, 0xcd);
const QColor kSoonText(0x66, 0x4d, 0x03);
const QColor kErrorText(0xb0, 0x2a, 0x37);
// A task's elapsed time close to the limit at which BOINC aborts it: text only, on any background.
const QColor kElapsedWarningText(0xb3, 0x5c, 0x00);

QTableWidget* makeTable(QWidget* parent, const QStringList& headers, const QString& accessibleName) {
    auto* table = new QTableWidget(0, static_cast<int>(headers.size()), parent);
    table->setHorizontalHeaderLabels(headers);
    table->setAccessibleName(accessibleName);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setWordWrap(false);
    table->setTextElideMode(Qt::ElideMiddle);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setHighlightSections(false);
    return table;
}

QTableWidgetItem* cell(QTableWidget* table, int row, int column, bool rightAligned = false) {
    auto* item = table->item(row, column);
    if (!item) {
        item = new QTableWidgetItem();
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        if (rightAligned) {
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        }
        table->setItem(row, column, item);
    }
    return item;
}

void setCell(QTableWidget* table, int row, int column, const QString& text, bool rightAligned = false) {
    auto* item = cell(table, row, column, rightAligned);
    item->setText(text);
    item->setToolTip(text);
}

/// The progress bar in a table cell, made on first use.
QProgressBar* progressBar(QTableWidget* table, int row, int column) {
    auto* bar = qobject_cast<QProgressBar*>(table->cellWidget(row, column));
    if (!bar) {
        bar = new QProgressBar();
        bar->setRange(0, 1000);
        bar->setTextVisible(true);
        table->setCellWidget(row, column, bar);
    }
    return bar;
}

/// Sizes @p column to its contents up to @p maxWidth; the rest is elided, the cell's tooltip has it all.
void fitColumn(QTableWidget* table, int column, int maxWidth) {
    // QTableView hides the hint that QAbstractItemView offers.
    const int width = std::max(static_cast<const QAbstractItemView*>(table)->sizeHintForColumn(column),
                               table->horizontalHeader()->sectionSizeHint(column));
    table->horizontalHeader()->resizeSection(column, std::min(width, maxWidth));
}

QLabel* wrappedLabel(QWidget* parent, const QString& accessibleName) {
    auto* label = new QLabel(parent);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setAccessibleName(accessibleName);
    return label;
}

QString stateColor(api::BoincState state) {
    switch (state) {
    case api::BoincState::Running:
        return QStringLiteral("#2e9e5b");
    case api::BoincState::Suspended:
    case api::BoincState::Starting:
    case api::BoincState::Held:
        return QStringLiteral("#c79a16");
    case api::BoincState::Error:
        return QStringLiteral("#d03b3b");
    case api::BoincState::Off:
        break;
    }
    return QStringLiteral("#8a8f96");
}

/// How long nicerd waits for BOINC to finish an attach, in whole minutes.
constexpr auto kOperationMinutes =
    std::chrono::duration_cast<std::chrono::minutes>(api::kBoincOperationLimit).count();

QString busyText(const BoincRequest& r, const QString& name) {
    switch (r.kind) {
    case BoincRequest::Kind::Attach:
        return BoincPanel::tr("Attaching to %1\u2026 BOINC answers once it has read the project's web site "
                              "(up to %2 minutes).")
            .arg(r.url)
            .arg(kOperationMinutes);
    case BoincRequest::Kind::AttachAccountManager:
        return BoincPanel::tr("Attaching to the account manager %1\u2026 BOINC answers once it has logged in "
                              "(up to %2 minutes).")
            .arg(r.url)
            .arg(kOperationMinutes);
    case BoincRequest::Kind::Detach:
        break;
    }
    return BoincPanel::tr("Detaching from %1\u2026").arg(name);
}

QString doneText(const BoincRequest& r, const QString& name) {
    switch (r.kind) {
    case BoincRequest::Kind::Attach:
        return BoincPanel::tr("Attached to %1. BOINC now asks the project for tasks.").arg(r.url);
    case BoincRequest::Kind::AttachAccountManager:
        return BoincPanel::tr("Attached to the account manager %1. It attaches the projects you chose on its "
                              "web site.")
            .arg(r.url);
    case BoincRequest::Kind::Detach:
        break;
    }
    return BoincPanel::tr("Detached from %1.").arg(name);
}

QString failedText(const BoincRequest& r, const QString& name, const QString& why) {
    switch (r.kind) {
    case BoincRequest::Kind::Attach:
        return BoincPanel::tr("Could not attach to %1: %2").arg(r.url, why);
    case BoincRequest::Kind::AttachAccountManager:
        return BoincPanel::tr("Could not attach to the account manager %1: %2").arg(r.url, why);
    case BoincRequest::Kind::Detach:
        break;
    }
    return BoincPanel::tr("Could not detach from %1: %2").arg(name, why);
}

} // namespace

BoincPanel::BoincPanel(QWidget* parent)
    : QWidget(parent) {
    setAccessibleName(tr("BOINC"));
    buildOffHint();
    buildHeader();
    buildSystemServiceWarning();
    m_action = wrappedLabel(this, tr("Last BOINC request"));
    m_action->hide();
    buildProjectsTable();
    buildTasksTable();
    buildTransfersTable();
    buildLists();

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_offHint);
    layout->addWidget(m_header);
    layout->addWidget(m_warning);
    layout->addWidget(m_action);
    layout->addWidget(m_lists, 1);
    layout->addStretch(0); // keeps the lines at the top while the tables are hidden

    setStatus(api::BoincStatus{});
}

void BoincPanel::buildOffHint() {
    m_offHint = new QWidget(this);
    m_offText = wrappedLabel(m_offHint, tr("BOINC"));
    m_offText->setText(tr("BOINC is not running under nicer. To compute for BOINC projects, choose the BOINC "
                          "workload (Preset, on the Overview tab); then attach your projects here."));
    auto* useBoinc = new QPushButton(tr("Use the BOINC workload"), m_offHint);
    useBoinc->setObjectName(QStringLiteral("useBoinc"));
    useBoinc->setAccessibleName(tr("Run BOINC as nicer's workload"));
    connect(useBoinc, &QPushButton::clicked, this, &BoincPanel::boincWorkloadRequested);
    auto* offLayout = new QHBoxLayout(m_offHint);
    offLayout->setContentsMargins(0, 0, 0, 0);
    offLayout->addWidget(m_offText, 1);
    offLayout->addWidget(useBoinc, 0, Qt::AlignTop);
}

void BoincPanel::buildHeader() {
    m_header = new QWidget(this);
    m_state = new QLabel(m_header);
    m_state->setAccessibleName(tr("BOINC state"));
    m_state->setWordWrap(true);
    m_state->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_clock = wrappedLabel(m_header, tr("BOINC's clock"));
    m_clock->setToolTip(
        tr("BOINC aborts a task whose elapsed time passes a limit, however little CPU the task got. nicer "
           "keeps BOINC's clock as fast as its tasks run, so no task is aborted for the time nicer held it "
           "back."));
    m_preferences = wrappedLabel(m_header, tr("BOINC preferences"));
    m_preferences->setToolTip(
        tr("nicer sets BOINC to compute whenever it may, and decides itself how much CPU "
           "BOINC gets; your other BOINC preferences are kept."));
    m_limits = wrappedLabel(m_header, tr("BOINC transfer limits"));
    m_limits->setToolTip(
        tr("nicer sets BOINC's download and upload limits every few seconds, from how much of "
           "your network link your own programs use."));
    m_attachButton = new QPushButton(tr("Attach project\u2026"), m_header);
    m_attachButton->setAccessibleName(tr("Attach BOINC to a project"));
    connect(m_attachButton, &QPushButton::clicked, this, &BoincPanel::openAttachDialog);
    auto* headerText = new QVBoxLayout();
    headerText->setSpacing(2);
    headerText->addWidget(m_state);
    headerText->addWidget(m_clock);
    headerText->addWidget(m_preferences);
    headerText->addWidget(m_limits);
    auto* headerLayout = new QHBoxLayout(m_header);
    headerLayout->setContentsMargins(0, 0, 0, 0);
    headerLayout->addLayout(headerText, 1);
    headerLayout->addWidget(m_attachButton, 0, Qt::AlignTop);
}

void BoincPanel::buildSystemServiceWarning() {
    // The system-wide client: a warning that cannot be missed, and its command to copy.
    m_warning = new QFrame(this);
    m_warning->setObjectName(QStringLiteral("boincSystemService"));
    m_warning->setAccessibleName(tr("Warning: the system-wide BOINC client"));
    m_warning->setStyleSheet(QStringLiteral(
        "#boincSystemService { background: #fff3cd; border: 1px solid #e0b252; border-radius: 4px; }"
        "#boincSystemService QLabel { color: #664d03; background: transparent; }"));
    auto* icon = new QLabel(m_warning);
    icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(32, 32));
    auto* title = new QLabel(tr("<b>Another BOINC client runs on this computer</b>"), m_warning);
    m_warningText = wrappedLabel(m_warning, tr("What the system-wide BOINC client means"));
    m_command = new QLineEdit(m_warning);
    m_command->setReadOnly(true);
    m_command->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_command->setAccessibleName(tr("Command to hand BOINC to nicer"));
    m_copy = new QPushButton(tr("Copy"), m_warning);
    m_copy->setAccessibleName(tr("Copy the command"));
    connect(m_copy, &QPushButton::clicked, this, [this] {
        QApplication::clipboard()->setText(m_command->text());
        m_command->selectAll();
    });
    m_warningAfter = wrappedLabel(m_warning, tr("After the command"));
    auto* commandRow = new QHBoxLayout();
    commandRow->addWidget(m_command, 1);
    commandRow->addWidget(m_copy);
    auto* warningText = new QVBoxLayout();
    warningText->addWidget(title);
    warningText->addWidget(m_warningText);
    warningText->addLayout(commandRow);
    warningText->addWidget(m_warningAfter);
    auto* warningLayout = new QHBoxLayout(m_warning);
    warningLayout->addWidget(icon, 0, Qt::AlignTop);
    warningLayout->addLayout(warningText, 1);
}

void BoincPanel::buildProjectsTable() {
    m_projects = makeTable(this,
                           {tr("Project"), tr("Your credit"), tr("This computer"), tr("Recent average"),
                            tr("Status"), QString()},
                           tr("BOINC projects"));
    auto* projectHeader = m_projects->horizontalHeader();
    projectHeader->setSectionResizeMode(QHeaderView::ResizeToContents);
    projectHeader->setSectionResizeMode(kProjectName, QHeaderView::Stretch);
    // Rows as high as the Detach button in them.
    m_projects->verticalHeader()->setDefaultSectionSize(
        std::max(m_projects->verticalHeader()->defaultSectionSize(),
                 QPushButton(tr("Detach\u2026")).sizeHint().height()));
    m_projects->horizontalHeaderItem(kUserCredit)->setToolTip(tr("Your total credit in the project"));
    m_projects->horizontalHeaderItem(kHostCredit)->setToolTip(tr("The credit this computer earned"));
    m_projects->horizontalHeaderItem(kRecentCredit)->setToolTip(tr("This computer's recent average per day"));
}

void BoincPanel::buildTasksTable() {
    m_tasks = makeTable(
        this,
        {tr("Task"), tr("Project"), tr("State"), tr("Progress"), tr("Elapsed"), tr("Left"), tr("Deadline")},
        tr("BOINC tasks"));
    auto* taskHeader = m_tasks->horizontalHeader();
    taskHeader->setSectionResizeMode(QHeaderView::ResizeToContents);
    taskHeader->setSectionResizeMode(kTaskName, QHeaderView::Stretch);
    taskHeader->setSectionResizeMode(kTaskProgress, QHeaderView::Fixed);
    taskHeader->resizeSection(kTaskProgress, 110);
    // A URL (a project whose name is not known yet) must not squeeze the task names.
    taskHeader->setSectionResizeMode(kTaskProject, QHeaderView::Interactive);
}

void BoincPanel::buildTransfersTable() {
    m_transfers = makeTable(this, {tr("File"), tr("Project"), tr("Direction"), tr("Progress"), tr("Rate")},
                            tr("BOINC file transfers"));
    auto* transferHeader = m_transfers->horizontalHeader();
    transferHeader->setSectionResizeMode(QHeaderView::ResizeToContents);
    transferHeader->setSectionResizeMode(kFile, QHeaderView::Stretch);
    transferHeader->setSectionResizeMode(kTransferProgress, QHeaderView::Fixed);
    transferHeader->resizeSection(kTransferProgress, 200);
    transferHeader->setSectionResizeMode(kTransferProject, QHeaderView::Interactive);
}

void BoincPanel::buildLists() {
    // Notices are prose: a read-only document of plain text (never markup), to read, select and copy.
    m_notices = new QTextEdit(this);
    m_notices->setReadOnly(true);
    m_notices->setAccessibleName(tr("BOINC notices"));

    m_lists = new QTabWidget(this);
    m_lists->addTab(m_tasks, QString());
    m_lists->addTab(m_projects, QString());
    m_lists->addTab(m_transfers, QString());
    m_lists->addTab(m_notices, QString());
}

void BoincPanel::setConnected(bool connected) {
    m_connected = connected;
    updateEnabled();
}

void BoincPanel::setStatus(const api::BoincStatus& status, std::optional<std::int64_t> now) {
    m_status = status;
    // Off: one line on how to start BOINC, and the system-wide client's warning when it runs instead.
    const bool off = !BoincModel::matters(status) || status.state == api::BoincState::Off;
    m_offHint->setVisible(off);
    m_header->setVisible(!off);
    m_lists->setVisible(!off);
    m_warning->setVisible(!status.systemService.empty());

    m_state->setText(QStringLiteral("<b>BOINC: <font color=\"%1\">\u25cf</font> %2</b>")
                         .arg(stateColor(status.state), BoincModel::stateText(status).toHtmlEscaped()));
    const QString clock = BoincModel::clockText(status);
    m_clock->setText(clock);
    m_clock->setVisible(!clock.isEmpty());
    m_preferences->setText(BoincModel::preferencesText(status));
    m_limits->setText(BoincModel::limitsText(status));
    m_limits->setVisible(api::boincAnswers(status.state));

    if (!status.systemService.empty()) {
        const auto advice = BoincModel::splitSystemService(QString::fromStdString(status.systemService));
        m_warningText->setText(advice.explanation);
        m_command->setText(advice.command);
        m_command->setCursorPosition(0);
        m_command->setVisible(!advice.command.isEmpty());
        m_copy->setVisible(!advice.command.isEmpty());
        m_warningAfter->setText(advice.after);
        m_warningAfter->setVisible(!advice.after.isEmpty());
    }

    renderProjects();
    renderTasks(now.value_or(QDateTime::currentSecsSinceEpoch()));
    renderTransfers();
    renderNotices();
    updateEnabled();
}

void BoincPanel::updateEnabled() {
    const bool canAsk = m_connected && api::boincAnswers(m_status.state);
    m_attachButton->setEnabled(canAsk);
    m_attachButton->setToolTip(canAsk ? tr("Attach this computer to a BOINC project or an account manager")
                               : m_status.state == api::BoincState::Held
                                   ? tr("nicer holds BOINC now: attach when it runs again")
                                   : tr("BOINC must be running to attach a project"));
    if (auto* use = m_offHint->findChild<QPushButton*>(QStringLiteral("useBoinc"))) {
        use->setEnabled(m_connected);
    }
    for (int row = 0; row < m_projects->rowCount(); ++row) {
        if (auto* button = detachButton(row)) {
            button->setEnabled(canAsk && !m_detaching.contains(button->property("url").toString()));
        }
    }
}

void BoincPanel::renderProjects() {
    const auto rows = BoincModel::projectRows(m_status);
    const int count = static_cast<int>(rows.size());
    m_lists->setTabText(kProjectsTab, tr("Projects (%1)").arg(count));
    m_projects->setRowCount(count);
    for (int i = 0; i < count; ++i) {
        const auto& r = rows[static_cast<std::size_t>(i)];
        setCell(m_projects, i, kProjectName, r.name);
        cell(m_projects, i, kProjectName)->setToolTip(r.url);
        setCell(m_projects, i, kUserCredit, r.userCredit, true);
        setCell(m_projects, i, kHostCredit, r.hostCredit, true);
        setCell(m_projects, i, kRecentCredit, r.recentCredit, true);
        setCell(m_projects, i, kProjectStatus, r.status);
        auto* button = detachButton(i);
        if (!button) {
            button = new QPushButton();
            connect(button, &QPushButton::clicked, this,
                    [this, button] { confirmDetach(button->property("url").toString()); });
            m_projects->setCellWidget(i, kProjectAction, button);
        }
        const bool detaching = m_detaching.contains(r.url);
        button->setProperty("url", r.url);
        button->setText(detaching ? tr("Detaching\u2026") : tr("Detach\u2026"));
        button->setAccessibleName(tr("Detach from %1").arg(r.name));
        button->setToolTip(tr("Detach this computer from %1; its tasks here are dropped").arg(r.name));
    }
    updateEnabled();
}

void BoincPanel::renderTasks(std::int64_t now) {
    const auto rows = BoincModel::taskRows(m_status, now);
    const int count = static_cast<int>(rows.size());
    m_lists->setTabText(kTasksTab, tr("Tasks (%1)").arg(count));
    const bool resized = m_tasks->rowCount() != count;
    m_tasks->setRowCount(count);
    for (int i = 0; i < count; ++i) {
        const auto& r = rows[static_cast<std::size_t>(i)];
        setCell(m_tasks, i, kTaskName, r.name);
        setCell(m_tasks, i, kTaskProject, r.project);
        setCell(m_tasks, i, kTaskState, r.state);
        auto* bar = progressBar(m_tasks, i, kTaskProgress);
        bar->setValue(static_cast<int>(r.fraction * 1000));
        bar->setFormat(r.progress);
        bar->setAccessibleName(tr("Progress of %1").arg(r.name));
        setCell(m_tasks, i, kElapsed, r.elapsed, true);
        auto* elapsed = cell(m_tasks, i, kElapsed);
        if (!r.elapsedToolTip.isEmpty()) {
            elapsed->setToolTip(r.elapsedToolTip);
        }
        elapsed->setData(Qt::ForegroundRole,
                         r.elapsedNearLimit ? QVariant(QBrush(kElapsedWarningText)) : QVariant());
        setCell(m_tasks, i, kRemaining, r.remaining, true);
        auto* deadline = cell(m_tasks, i, kDeadline);
        deadline->setText(r.deadline);
        deadline->setToolTip(r.deadlineToolTip);
        QFont font = m_tasks->font();
        switch (r.urgency) {
        case DeadlineUrgency::Past:
            deadline->setBackground(kPastBackground);
            deadline->setForeground(kPastText);
            font.setBold(true);
            break;
        case DeadlineUrgency::Soon:
            deadline->setBackground(kSoonBackground);
            deadline->setForeground(kSoonText);
            font.setBold(true);
            break;
        case DeadlineUrgency::None:
            deadline->setData(Qt::BackgroundRole, QVariant());
            deadline->setData(Qt::ForegroundRole, QVariant());
            break;
        }
        deadline->setFont(font);
    }
    if (resized) {
        // Only when rows come or go: a column the volunteer widened stays so between polls.
        fitColumn(m_tasks, kTaskProject, kProjectColumnMaxWidth);
    }
}

void BoincPanel::renderTransfers() {
    const auto rows = BoincModel::transferRows(m_status);
    const int count = static_cast<int>(rows.size());
    m_lists->setTabText(kTransfersTab, tr("Transfers (%1)").arg(count));
    const bool resized = m_transfers->rowCount() != count;
    m_transfers->setRowCount(count);
    for (int i = 0; i < count; ++i) {
        const auto& r = rows[static_cast<std::size_t>(i)];
        setCell(m_transfers, i, kFile, r.file);
        setCell(m_transfers, i, kTransferProject, r.project);
        setCell(m_transfers, i, kDirection,
                r.upload ? QStringLiteral("\u2191 %1").arg(r.direction)
                         : QStringLiteral("\u2193 %1").arg(r.direction));
        auto* bar = progressBar(m_transfers, i, kTransferProgress);
        bar->setValue(static_cast<int>(r.fraction * 1000));
        bar->setFormat(r.progress);
        bar->setAccessibleName(tr("Progress of %1").arg(r.file));
        setCell(m_transfers, i, kRate, r.rate, true);
    }
    if (resized) {
        fitColumn(m_transfers, kTransferProject, kProjectColumnMaxWidth);
    }
}

void BoincPanel::renderNotices() {
    const auto rows = BoincModel::noticeRows(m_status);
    const bool anyError = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.error; });
    m_lists->setTabText(kNoticesTab, tr("Notices (%1)").arg(rows.size()));
    m_lists->setTabIcon(kNoticesTab,
                        anyError ? style()->standardIcon(QStyle::SP_MessageBoxWarning) : QIcon());
    if (m_noticesDrawn && m_status.notices == m_shownNotices) {
        return; // the same: keep the reader's place and selection
    }
    m_noticesDrawn = true;
    m_shownNotices = m_status.notices;
    m_notices->clear();
    QTextCursor cursor(m_notices->document());
    QTextCharFormat meta;
    meta.setForeground(m_notices->palette().color(QPalette::PlaceholderText));
    QTextCharFormat error;
    error.setForeground(kErrorText);
    error.setFontWeight(QFont::Bold);
    QTextCharFormat errorBody;
    errorBody.setForeground(kErrorText);
    QTextCharFormat title;
    title.setFontWeight(QFont::Bold);
    const QTextCharFormat body;
    QTextBlockFormat first;
    first.setTopMargin(0);
    QTextBlockFormat spaced;
    spaced.setTopMargin(10);
    bool start = true;
    // insertText() takes the text as it is: BOINC's notices never become markup here.
    for (const auto& r : rows) {
        if (!start) {
            cursor.insertBlock(spaced);
        } else {
            cursor.setBlockFormat(first);
        }
        start = false;
        if (r.error) {
            cursor.insertText(QStringLiteral("\u26a0 ") + tr("Error") + QStringLiteral(" \u00b7 "), error);
        }
        cursor.insertText(r.when.isEmpty() ? r.source : r.when + QStringLiteral(" \u00b7 ") + r.source, meta);
        if (!r.title.isEmpty()) {
            cursor.insertBlock(first);
            cursor.insertText(r.title, title);
        }
        cursor.insertBlock(first);
        cursor.insertText(r.text, r.error ? errorBody : body);
    }
    if (rows.empty()) {
        cursor.insertText(tr("No notices from BOINC or its projects."), meta);
    }
    m_notices->moveCursor(QTextCursor::Start);
}

QPushButton* BoincPanel::detachButton(int row) const {
    return qobject_cast<QPushButton*>(m_projects->cellWidget(row, kProjectAction));
}

void BoincPanel::openAttachDialog() {
    if (!m_dialog) {
        m_dialog = new BoincAttachDialog(this);
        connect(m_dialog, &BoincAttachDialog::submitted, this, &BoincPanel::send);
    }
    m_dialog->show();
    m_dialog->raise();
    m_dialog->activateWindow();
}

void BoincPanel::confirmDetach(const QString& url) {
    const QString name = BoincModel::projectName(m_status.projects, url.toStdString());
    if (m_confirm) {
        m_confirm->close();
    }
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Detach from %1?").arg(name),
                                tr("Detach this computer from %1?").arg(name), QMessageBox::NoButton, this);
    box->setInformativeText(
        tr("Its tasks on this computer are dropped, also those in progress: their work is "
           "lost and earns no credit. Your account and the credit you have earned stay; "
           "you can attach again later."));
    QPushButton* detach = box->addButton(tr("Detach"), QMessageBox::DestructiveRole);
    QPushButton* cancel = box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(cancel);
    box->setEscapeButton(cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(detach, &QPushButton::clicked, this, [this, url] { send(BoincRequest::detach(url)); });
    m_confirm = box;
    box->open(); // not exec(): the window keeps drawing while the volunteer decides
}

void BoincPanel::send(const BoincRequest& request) {
    const QString name = BoincModel::projectName(m_status.projects, request.url.toStdString());
    const QString busy = busyText(request, name);
    const bool detach = request.kind == BoincRequest::Kind::Detach;
    if (detach) {
        m_detaching.insert(request.url);
        renderProjects();
    } else if (m_dialog) {
        m_dialog->setBusy(busy);
    }
    setAction(busy, false);
    const QDBusPendingCall call =
        m_handler
            ? m_handler(request)
            : QDBusPendingCall::fromError(QDBusError(QDBusError::Disconnected, tr("nicerd is not running.")));
    auto* watcher = new QDBusPendingCallWatcher(call, this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this,
            [this, request, name, detach](QDBusPendingCallWatcher* w) {
                w->deleteLater();
                const bool ok = !w->isError();
                QString why = w->error().message();
                if (why.isEmpty()) {
                    why = w->error().name();
                }
                const QString text = ok ? doneText(request, name) : failedText(request, name, why);
                if (detach) {
                    m_detaching.remove(request.url);
                    renderProjects();
                } else if (m_dialog) {
                    m_dialog->showResult(ok, text);
                }
                setAction(text, !ok);
            });
}

void BoincPanel::setAction(const QString& text, bool error) {
    m_actionIsError = error;
    m_action->setText(text);
    m_action->setStyleSheet(error ? QStringLiteral("QLabel { color: #b02a37; font-weight: bold; }")
                                  : QString());
    m_action->setVisible(!text.isEmpty());
}

bool BoincPanel::showsClient() const {
    return m_header->isVisibleTo(this);
}

QString BoincPanel::offText() const {
    return m_offHint->isVisibleTo(this) ? m_offText->text() : QString();
}

QString BoincPanel::stateText() const {
    return BoincModel::stateText(m_status);
}

QString BoincPanel::preferencesText() const {
    return m_preferences->text();
}

QString BoincPanel::limitsText() const {
    return m_limits->isVisibleTo(this) ? m_limits->text() : QString();
}

QString BoincPanel::clockText() const {
    return m_clock->isVisibleTo(this) ? m_clock->text() : QString();
}

QString BoincPanel::systemServiceText() const {
    return m_warning->isVisibleTo(this) ? m_warningText->text() : QString();
}

QString BoincPanel::actionText() const {
    return m_action->isVisibleTo(this) ? m_action->text() : QString();
}

} // namespace nicer::tray
