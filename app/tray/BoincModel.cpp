#include "tray/BoincModel.h"

#include <QDateTime>
#include <QLocale>

#include <algorithm>
#include <cmath>

namespace nicer::tray {

namespace {

constexpr std::int64_t kDay = 24 * 60 * 60;

QString q(const std::string& text) {
    return QString::fromStdString(text);
}

using api::BoincTaskState;

/// A task that is over: its deadline no longer asks anything of the volunteer.
bool isOver(BoincTaskState state) {
    return state == BoincTaskState::Reported || state == BoincTaskState::Error ||
           state == BoincTaskState::Aborted;
}

/// A task that has not started: it has no elapsed time yet.
bool notStarted(BoincTaskState state) {
    return state == BoincTaskState::Downloading || state == BoincTaskState::Ready;
}

QString withCapital(QString text) {
    if (!text.isEmpty()) {
        text[0] = text[0].toUpper();
    }
    return text;
}

} // namespace

bool BoincModel::matters(const api::BoincStatus& status) {
    return status.state != api::BoincState::Off || !status.systemService.empty();
}

QString BoincModel::stateText(const api::BoincStatus& status) {
    const QString detail = q(status.detail);
    switch (status.state) {
    case api::BoincState::Running:
        return tr("Running");
    case api::BoincState::Starting:
        return tr("Starting\u2026");
    case api::BoincState::Suspended:
        return detail.isEmpty() ? tr("Suspended") : tr("Suspended: %1").arg(detail);
    case api::BoincState::Held:
        // nicer froze the work and the client with it; the detail says why, in a sentence of its own
        // ("paused: ...", "held: ...").
        return detail.isEmpty() ? tr("Held by nicer") : withCapital(detail);
    case api::BoincState::Error:
        return detail.isEmpty() ? tr("Error") : tr("Error: %1").arg(detail);
    case api::BoincState::Off:
        break;
    }
    return tr("Off");
}

QString BoincModel::preferencesText(const api::BoincStatus& status) {
    if (status.overrideApplied) {
        return tr(
            "nicer's preferences are in force: BOINC computes whenever nicer gives it CPU, and only nicer "
            "holds it back.");
    }
    if (status.state == api::BoincState::Starting || status.state == api::BoincState::Off) {
        return tr("nicer's preferences apply as soon as BOINC answers.");
    }
    return tr(
        "nicer's preferences are not in force yet: BOINC may still suspend or slow down its work on its "
        "own.");
}

QString BoincModel::limitsText(const api::BoincStatus& status) {
    const QString down = status.maxDownRate > 0 ? tr("%1/s").arg(dataSize(status.maxDownRate)) : QString();
    const QString up = status.maxUpRate > 0 ? tr("%1/s").arg(dataSize(status.maxUpRate)) : QString();
    if (!down.isEmpty() && !up.isEmpty()) {
        return tr("Downloads limited to %1 and uploads to %2 so your own traffic comes first.").arg(down, up);
    }
    if (!down.isEmpty()) {
        return tr("Downloads limited to %1 so your own traffic comes first; uploads not limited.").arg(down);
    }
    if (!up.isEmpty()) {
        return tr("Uploads limited to %1 so your own traffic comes first; downloads not limited.").arg(up);
    }
    return tr("Transfers not limited now: nicer limits them when your own traffic needs the link.");
}

QString BoincModel::clockText(const api::BoincStatus& status) {
    return status.clock.empty() ? QString() : tr("BOINC's clock: %1").arg(q(status.clock));
}

SystemServiceAdvice BoincModel::splitSystemService(const QString& advice) {
    const QString text = advice.trimmed();
    SystemServiceAdvice out;
    const QString marker = QStringLiteral("run: ");
    if (const auto run = text.lastIndexOf(marker); run >= 0) {
        QString rest = text.mid(run + marker.size());
        const auto paren = rest.indexOf(QLatin1String(" ("));
        out.command = (paren >= 0 ? rest.left(paren) : rest).trimmed();
        if (out.command.endsWith(QLatin1Char('.'))) {
            out.command.chop(1);
        }
        out.command.remove(QLatin1Char('`'));
        out.explanation = withCapital(text.left(run + marker.size() - 1));
        if (paren >= 0) {
            QString after = rest.mid(paren + 1).trimmed();
            if (after.startsWith(QLatin1Char('(')) && after.endsWith(QLatin1Char(')'))) {
                after = after.mid(1, after.size() - 2);
            }
            out.after = withCapital(after);
        }
        return out;
    }
    out.explanation = withCapital(text);
    if (const auto open = text.indexOf(QLatin1Char('`')); open >= 0) {
        if (const auto close = text.indexOf(QLatin1Char('`'), open + 1); close > open) {
            out.command = text.mid(open + 1, close - open - 1);
        }
    }
    return out;
}

QString BoincModel::projectName(const std::vector<api::BoincProject>& projects, const std::string& url) {
    const auto it =
        std::find_if(projects.begin(), projects.end(), [&](const auto& p) { return p.url == url; });
    return it != projects.end() && !it->name.empty() ? q(it->name) : q(url);
}

QString BoincModel::taskStateText(api::BoincTaskState state) {
    switch (state) {
    case BoincTaskState::Downloading:
        return tr("Downloading input files");
    case BoincTaskState::Ready:
        return tr("Ready to start");
    case BoincTaskState::Running:
        return tr("Running");
    case BoincTaskState::Suspended:
        return tr("Suspended");
    case BoincTaskState::Uploading:
        return tr("Uploading the result");
    case BoincTaskState::ReadyToReport:
        return tr("Ready to report");
    case BoincTaskState::Reported:
        return tr("Reported");
    case BoincTaskState::Error:
        return tr("Computation error");
    case BoincTaskState::Aborted:
        return tr("Aborted");
    }
    return {};
}

QString BoincModel::durationText(double seconds) {
    const auto total = seconds > 0 && std::isfinite(seconds) ? static_cast<qint64>(std::llround(seconds)) : 0;
    const qint64 days = total / kDay;
    const qint64 hours = total % kDay / 3600;
    const qint64 minutes = total % 3600 / 60;
    const qint64 secs = total % 60;
    if (total < 60) {
        return tr("%1 s").arg(secs);
    }
    if (total < 3600) {
        return secs > 0 ? tr("%1 min %2 s").arg(minutes).arg(secs) : tr("%1 min").arg(minutes);
    }
    if (total < kDay) {
        return minutes > 0 ? tr("%1 h %2 min").arg(hours).arg(minutes) : tr("%1 h").arg(hours);
    }
    return hours > 0 ? tr("%1 d %2 h").arg(days).arg(hours) : tr("%1 d").arg(days);
}

DeadlineUrgency BoincModel::deadlineUrgency(const api::BoincTask& task, std::int64_t now) {
    if (task.deadline <= 0 || isOver(task.state)) {
        return DeadlineUrgency::None;
    }
    if (task.deadline <= now) {
        return DeadlineUrgency::Past;
    }
    return task.deadline - now < kDay ? DeadlineUrgency::Soon : DeadlineUrgency::None;
}

QString BoincModel::dataSize(double bytes) {
    return QLocale().formattedDataSize(static_cast<qint64>(std::llround(std::max(bytes, 0.0))), 1);
}

QString BoincModel::dateTimeText(std::int64_t secondsSinceEpoch) {
    // The user's short format, without the seconds: a deadline or a notice is not that precise.
    const QLocale locale;
    QString format = locale.dateTimeFormat(QLocale::ShortFormat);
    format.remove(QLatin1String(":ss"));
    return locale.toString(QDateTime::fromSecsSinceEpoch(secondsSinceEpoch), format);
}

std::vector<BoincProjectRow> BoincModel::projectRows(const api::BoincStatus& status) {
    std::vector<BoincProjectRow> rows;
    rows.reserve(status.projects.size());
    const QLocale locale;
    for (const auto& p : status.projects) {
        BoincProjectRow row;
        row.url = q(p.url);
        row.name = p.name.empty() ? row.url : q(p.name);
        row.userCredit = locale.toString(p.userCredit, 'f', 0);
        row.hostCredit = locale.toString(p.hostCredit, 'f', 0);
        row.recentCredit = tr("%1/day").arg(locale.toString(p.recentCredit, 'f', 1));
        QStringList marks;
        if (p.suspended) {
            marks << tr("Suspended");
        }
        if (p.noMoreWork) {
            marks << tr("No new tasks");
        }
        if (p.viaAccountManager) {
            marks << tr("Through an account manager");
        }
        row.status = marks.join(QLatin1String(", "));
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<BoincTaskRow> BoincModel::taskRows(const api::BoincStatus& status, std::int64_t now) {
    std::vector<BoincTaskRow> rows;
    rows.reserve(status.tasks.size());
    for (const auto& t : status.tasks) {
        BoincTaskRow row;
        row.name = q(t.name);
        row.project = projectName(status.projects, t.projectUrl);
        row.state = taskStateText(t.state);
        row.fraction = std::clamp(std::isfinite(t.fractionDone) ? t.fractionDone : 0.0, 0.0, 1.0);
        row.progress = QStringLiteral("%1 %").arg(100.0 * row.fraction, 0, 'f', 1);
        const bool started = !(notStarted(t.state) && t.elapsedSeconds <= 0);
        row.elapsed = started ? durationText(t.elapsedSeconds) : QStringLiteral("\u2014");
        const double limit = t.elapsedLimitSeconds;
        if (started && api::boincTaskCanRun(t.state) && limit > 0 && std::isfinite(limit) &&
            std::isfinite(t.elapsedSeconds)) {
            const double elapsedSeconds = std::max(t.elapsedSeconds, 0.0);
            const double share = elapsedSeconds / limit;
            row.elapsedNearLimit = share > kElapsedWarnShare;
            const QString elapsed = durationText(elapsedSeconds);
            const QString allowed = durationText(limit);
            row.elapsed = tr("%1 of %2").arg(elapsed, allowed);
            // Whole percents, down: 100% only once BOINC's clock has reached the limit.
            const QString percent =
                QLocale().toString(static_cast<qint64>(std::floor(100.0 * elapsedSeconds / limit + 1e-9)));
            row.elapsedToolTip =
                row.elapsedNearLimit
                    ? tr("BOINC's clock: %1 of the %2 it allows before it aborts the task (%3%, close to the "
                         "limit)")
                          .arg(elapsed, allowed, percent)
                    : tr("BOINC's clock: %1 of the %2 it allows before it aborts the task (%3%)")
                          .arg(elapsed, allowed, percent);
            if (t.cpuSeconds > 0 && std::isfinite(t.cpuSeconds)) {
                row.elapsedToolTip += tr("; %1 of CPU").arg(durationText(t.cpuSeconds));
            }
            row.elapsedToolTip += QLatin1Char('.');
        }
        row.remaining = t.remainingSeconds > 0 ? durationText(t.remainingSeconds) : QStringLiteral("\u2014");
        row.urgency = deadlineUrgency(t, now);
        if (t.deadline > 0) {
            row.deadline = dateTimeText(t.deadline);
            switch (row.urgency) {
            case DeadlineUrgency::Past:
                row.deadlineToolTip = tr("The deadline has passed %1 ago: the project may not grant credit "
                                         "for this task, and may send it to another volunteer.")
                                          .arg(durationText(double(now - t.deadline)));
                break;
            case DeadlineUrgency::Soon:
                row.deadlineToolTip =
                    tr("Due in less than a day (in %1).").arg(durationText(double(t.deadline - now)));
                break;
            case DeadlineUrgency::None:
                row.deadlineToolTip = t.deadline > now
                                          ? tr("Due in %1.").arg(durationText(double(t.deadline - now)))
                                          : tr("The deadline has passed; the task is over.");
                break;
            }
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<BoincTransferRow> BoincModel::transferRows(const api::BoincStatus& status) {
    std::vector<BoincTransferRow> rows;
    rows.reserve(status.transfers.size());
    for (const auto& t : status.transfers) {
        BoincTransferRow row;
        row.file = q(t.name);
        row.project = projectName(status.projects, t.projectUrl);
        row.upload = t.upload;
        row.direction = t.upload ? tr("Upload") : tr("Download");
        if (t.bytesTotal > 0) {
            row.fraction = std::clamp(t.bytesDone / t.bytesTotal, 0.0, 1.0);
            row.progress = tr("%1 of %2").arg(dataSize(t.bytesDone), dataSize(t.bytesTotal));
        } else {
            row.progress = dataSize(t.bytesDone);
        }
        if (t.state == api::BoincTransferState::Waiting) {
            row.rate = tr("waiting");
        } else if (t.rate > 0) {
            row.rate = tr("%1/s").arg(dataSize(t.rate));
        } else {
            row.rate = QStringLiteral("\u2014");
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<BoincNoticeRow> BoincModel::noticeRows(const api::BoincStatus& status) {
    std::vector<api::BoincNotice> notices = status.notices;
    std::stable_sort(notices.begin(), notices.end(), [](const auto& a, const auto& b) {
        return a.time != b.time ? a.time > b.time : a.seqno > b.seqno;
    });
    std::vector<BoincNoticeRow> rows;
    rows.reserve(notices.size());
    for (const auto& n : notices) {
        BoincNoticeRow row;
        row.when = n.time > 0 ? dateTimeText(n.time) : QString();
        row.source = n.project.empty() ? tr("BOINC") : q(n.project);
        row.title = q(n.title);
        row.text = q(n.text);
        row.error = n.error;
        rows.push_back(std::move(row));
    }
    return rows;
}

} // namespace nicer::tray
