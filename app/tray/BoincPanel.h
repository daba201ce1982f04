#pragma once

#include "api/Boinc.h"
#include "tray/BoincAttachDialog.h"
#include "tray/BoincModel.h"

#include <QDBusPendingCall>
#include <QMessageBox>
#include <QPointer>
#include <QSet>
#include <QWidget>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QTabWidget;
class QTableWidget;
class QTextEdit;

namespace nicer::tray {

/**
 * nicerd's BOINC client as a volunteer expects to see it: its state in plain words, whether nicer's
 * preferences are in force and how its transfers are limited, a warning when the system-wide BOINC client
 * competes with it, and its projects (with Detach), tasks, transfers and notices; "Attach project…" opens
 * BoincAttachDialog. While no BOINC client runs under nicerd it is one line that says how to start one.
 *
 * It renders what BoincModel makes of api::BoincStatus and sends requests through a handler (in the window,
 * DaemonProxy::boincRequest), whose pending call it watches without blocking: the outcome is shown in the
 * panel and in the dialog, never lost.
 */
class BoincPanel : public QWidget {
    Q_OBJECT

public:
    using RequestHandler = std::function<QDBusPendingCall(const BoincRequest&)>;

    explicit BoincPanel(QWidget* parent = nullptr);

    void setRequestHandler(RequestHandler handler) { m_handler = std::move(handler); }
    /// Shows @p status as of @p now (seconds since the epoch; the clock's when not given).
    void setStatus(const api::BoincStatus& status, std::optional<std::int64_t> now = std::nullopt);
    /// Without nicerd nothing can be attached or detached.
    void setConnected(bool connected);
    const api::BoincStatus& status() const { return m_status; }

    /// Opens "Attach project…" (not modal: the window stays live while BOINC answers).
    void openAttachDialog();
    /// Asks to confirm detaching from the project at @p url; on yes, sends BoincDetach.
    void confirmDetach(const QString& url);

    // For tests.
    /// Whether the client's view (state, tables) shows, rather than the line on how to start BOINC.
    bool showsClient() const;
    QString offText() const;
    QString stateText() const;
    QString preferencesText() const;
    QString limitsText() const;
    /// The line on how nicer keeps BOINC's clock; empty while it is hidden.
    QString clockText() const;
    /// The system-service warning box (hidden when there is no system-wide client) and its command field.
    QWidget* systemServiceBox() const { return m_warning; }
    QString systemServiceText() const;
    QLineEdit* systemServiceCommand() const { return m_command; }
    /// What the last request did (busy, done, or nicerd's error), empty before the first.
    QString actionText() const;
    bool actionIsError() const { return m_actionIsError; }
    QTableWidget* projectsTable() const { return m_projects; }
    QTableWidget* tasksTable() const { return m_tasks; }
    QTableWidget* transfersTable() const { return m_transfers; }
    /// The notices as a document of plain text, latest first.
    QTextEdit* noticesView() const { return m_notices; }
    /// The tabs Tasks, Projects, Transfers and Notices, each with its count.
    QTabWidget* lists() const { return m_lists; }
    QPushButton* attachButton() const { return m_attachButton; }
    QPushButton* detachButton(int row) const;
    /// nullptr until first opened.
    BoincAttachDialog* attachDialog() const { return m_dialog; }
    /// The open confirmation of a detach, if any.
    QMessageBox* detachConfirmation() const { return m_confirm; }

signals:
    /// "Use the BOINC workload" on the line shown while BOINC is off.
    void boincWorkloadRequested();

private:
    /// The line shown while no BOINC client runs under nicerd: how to start one.
    void buildOffHint();
    /// The state, how nicer keeps BOINC's clock, the preferences and the transfer limits, with Attach.
    void buildHeader();
    void buildSystemServiceWarning();
    void buildProjectsTable();
    void buildTasksTable();
    void buildTransfersTable();
    /// The tabs of tasks, projects, transfers and notices.
    void buildLists();
    void send(const BoincRequest& request);
    void setAction(const QString& text, bool error);
    void renderProjects();
    void renderTasks(std::int64_t now);
    void renderTransfers();
    void renderNotices();
    void updateEnabled();

    RequestHandler m_handler;
    api::BoincStatus m_status;
    bool m_connected = false;
    QSet<QString> m_detaching; ///< URLs whose BoincDetach has not been answered yet
    bool m_actionIsError = false;

    QWidget* m_offHint = nullptr;
    QLabel* m_offText = nullptr;
    QWidget* m_header = nullptr;
    QLabel* m_state = nullptr;
    QLabel* m_clock = nullptr;
    QLabel* m_preferences = nullptr;
    QLabel* m_limits = nullptr;
    QPushButton* m_attachButton = nullptr;
    QWidget* m_warning = nullptr;
    QLabel* m_warningText = nullptr;
    QLineEdit* m_command = nullptr;
    QPushButton* m_copy = nullptr;
    QLabel* m_warningAfter = nullptr;
    QLabel* m_action = nullptr;
    QTabWidget* m_lists = nullptr;
    QTableWidget* m_projects = nullptr;
    QTableWidget* m_tasks = nullptr;
    QTableWidget* m_transfers = nullptr;
    QTextEdit* m_notices = nullptr;
    std::vector<api::BoincNotice> m_shownNotices; ///< what m_notices shows: redrawn only when they change
    bool m_noticesDrawn = false;
    QPointer<BoincAttachDialog> m_dialog;
    QPointer<QMessageBox> m_confirm;
};

} // namespace nicer::tray
