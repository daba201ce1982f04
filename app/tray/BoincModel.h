#pragma once

#include "api/Boinc.h"

#include <QCoreApplication>
#include <QString>

#include <cstdint>
#include <utility>
#include <vector>

// What the BOINC panel shows, made from nicerd's Boinc* properties without any widget: the words of a state,
// the name of a task's project, whether a deadline is near, the sizes and rates of transfers. The panel only
// puts these rows into tables; the unit tests read them directly.

namespace nicer::tray {

/// What the volunteer asks of nicerd's BOINC client: BoincAttach, BoincAttachAccountManager or BoincDetach.
struct BoincRequest {
    enum class Kind { Attach, AttachAccountManager, Detach };
    Kind kind = Kind::Attach;
    QString url;      ///< the project's master URL, or the account manager's
    QString key;      ///< Attach: the account key from the project's web site
    QString name;     ///< AttachAccountManager: the user name (or e-mail) at the account manager
    QString password; ///< AttachAccountManager

    static BoincRequest attach(QString url, QString key) {
        return {Kind::Attach, std::move(url), std::move(key), {}, {}};
    }
    static BoincRequest attachAccountManager(QString url, QString name, QString password) {
        return {Kind::AttachAccountManager, std::move(url), {}, std::move(name), std::move(password)};
    }
    static BoincRequest detach(QString url) { return {Kind::Detach, std::move(url), {}, {}, {}}; }
};

/// How close a task's report deadline is.
enum class DeadlineUrgency {
    None, ///< more than a day left, no deadline, or the task is over
    Soon, ///< less than a day left
    Past, ///< the deadline has passed: the project may give the task to someone else
};

struct BoincProjectRow {
    QString url;  ///< names the project in BoincDetach
    QString name; ///< the project's name, or its URL while BOINC has not fetched its page yet
    QString userCredit;
    QString hostCredit;
    QString recentCredit; ///< per day, this computer
    QString status;       ///< "Suspended", "No new tasks", "Through an account manager", joined; or empty
};

struct BoincTaskRow {
    QString name;
    QString project; ///< looked up by URL in the projects
    QString state;   ///< in words
    double fraction = 0.0;
    QString progress; ///< "45.2 %"
    /// BOINC's elapsed time; "1 h 20 min of 2 h 40 min" while the task can still run and the elapsed time at
    /// which BOINC aborts it is known.
    QString elapsed;
    /// With that limit: BOINC's clock against it and the CPU time, in words; else empty.
    QString elapsedToolTip;
    /// The elapsed time has passed kElapsedWarnShare of the limit: BOINC may soon abort the task.
    bool elapsedNearLimit = false;
    QString remaining;
    QString deadline; ///< local date and time; empty when none
    QString deadlineToolTip;
    DeadlineUrgency urgency = DeadlineUrgency::None;
};

struct BoincTransferRow {
    QString file;
    QString project;
    QString direction; ///< "Upload" or "Download"
    bool upload = false;
    double fraction = 0.0; ///< 0 while the size is unknown
    QString progress;      ///< "12.0 MiB of 40.0 MiB"
    QString rate;          ///< "1.2 MiB/s", or why it waits
};

struct BoincNoticeRow {
    QString when;   ///< local date and time
    QString source; ///< the project's name, or "BOINC" for the client's own
    QString title;
    QString text; ///< plain text, never markup
    bool error = false;
};

/// The system-service advice cut into its explanation, the command to run (empty when there is none) and
/// what to do after it.
struct SystemServiceAdvice {
    QString explanation;
    QString command;
    QString after;
};

class BoincModel {
    Q_DECLARE_TR_FUNCTIONS(BoincModel)

public:
    /// The share of a task's elapsed-time limit past which its elapsed time is shown as a warning.
    static constexpr double kElapsedWarnShare = 0.8;

    /// Whether the BOINC panel has anything to show: a BOINC client runs under nicerd, or the system one
    /// competes with it.
    static bool matters(const api::BoincStatus& status);

    /// "Running", "Suspended: <detail>", "Starting…", "Error: <detail>", "Off", or while nicer holds the
    /// client nicerd's detail ("Paused: nicer holds the work until you resume it").
    static QString stateText(const api::BoincStatus& status);
    /// Whether nicer's preferences override is in force, in words.
    static QString preferencesText(const api::BoincStatus& status);
    /// The transfer limits nicerd pushed into BOINC now, and why.
    static QString limitsText(const api::BoincStatus& status);
    /// "BOINC's clock: kept: ..." while nicer keeps BOINC's elapsed-time clock (BoincClock); else empty.
    static QString clockText(const api::BoincStatus& status);
    /// BoincSystemService cut into what it means and the command (after "run:", or in backquotes).
    static SystemServiceAdvice splitSystemService(const QString& advice);

    /// The project's name for @p url; its URL while the name is unknown or the project is not listed.
    static QString projectName(const std::vector<api::BoincProject>& projects, const std::string& url);
    /// A task's state in words.
    static QString taskStateText(api::BoincTaskState state);
    /// "45 s", "12 min 5 s", "1 h 23 min", "2 d 4 h".
    static QString durationText(double seconds);
    /// @p now and the deadline in seconds since the epoch.
    static DeadlineUrgency deadlineUrgency(const api::BoincTask& task, std::int64_t now);
    /// "1.5 MiB", in the user's locale.
    static QString dataSize(double bytes);
    /// A local date and time of seconds since the epoch.
    static QString dateTimeText(std::int64_t secondsSinceEpoch);

    static std::vector<BoincProjectRow> projectRows(const api::BoincStatus& status);
    static std::vector<BoincTaskRow> taskRows(const api::BoincStatus& status, std::int64_t now);
    static std::vector<BoincTransferRow> transferRows(const api::BoincStatus& status);
    /// The notices, latest first.
    static std::vector<BoincNoticeRow> noticeRows(const api::BoincStatus& status);
};

} // namespace nicer::tray
