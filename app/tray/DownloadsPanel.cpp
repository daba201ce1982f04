#include "tray/DownloadsPanel.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace nicer::tray {

namespace {

enum Column { kName, kProgress, kSize, kRate, kState, kColumns };

// Rows shown before the table scrolls: work units come in handfuls, and the chart keeps the room it needs.
constexpr int kVisibleRows = 6;

/// "1.5 MiB" for people, in the user's locale (1024-based, like nicer fetch).
QString dataSize(double bytes) {
    return QLocale().formattedDataSize(static_cast<qint64>(std::llround(bytes)), 1);
}

/// "in 10 min" or "in 40 s", rounded up like nicerd's own text.
QString retryText(qint64 seconds) {
    if (seconds < 60) {
        return DownloadsPanel::tr("in %n s", nullptr, static_cast<int>(std::max<qint64>(seconds, 0)));
    }
    return DownloadsPanel::tr("in %n min", nullptr, static_cast<int>((seconds + 59) / 60));
}

QTableWidgetItem* cell(QTableWidget* table, int row, int column) {
    auto* item = table->item(row, column);
    if (!item) {
        item = new QTableWidgetItem();
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        if (column == kSize || column == kRate) {
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        }
        table->setItem(row, column, item);
    }
    return item;
}

} // namespace

DownloadsPanel::DownloadsPanel(QWidget* parent)
    : QGroupBox(tr("Downloads"), parent) {
    setAccessibleName(tr("Downloads"));
    m_table = new QTableWidget(0, kColumns, this);
    m_table->setHorizontalHeaderLabels({tr("File"), tr("Progress"), tr("Size"), tr("Rate"), tr("State")});
    m_table->setAccessibleName(tr("Work units nicerd downloads"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    auto* header = m_table->horizontalHeader();
    header->setSectionResizeMode(kName, QHeaderView::Stretch);
    header->setSectionResizeMode(kProgress, QHeaderView::Fixed);
    header->setSectionResizeMode(kSize, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(kRate, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(kState, QHeaderView::Stretch);
    header->resizeSection(kProgress, 140);

    m_summary = new QLabel(this);
    m_summary->setAccessibleName(tr("Bandwidth"));
    m_summary->setToolTip(tr("How nicerd's downloads use your network link, and how fast they go now"));
    m_summary->setWordWrap(true);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_table);
    hide();
}

QString DownloadsPanel::summaryText() const {
    return m_summary->text();
}

void DownloadsPanel::setDownloads(const std::vector<api::DownloadEntry>& rows, double totalRate,
                                  const api::BandwidthMode& bandwidth) {
    setVisible(!rows.empty());
    if (rows.empty()) {
        m_table->setRowCount(0);
        return;
    }
    const int count = static_cast<int>(rows.size());
    const bool resized = m_table->rowCount() != count;
    m_table->setRowCount(count);
    int done = 0;
    for (int i = 0; i < count; ++i) {
        const api::DownloadEntry& r = rows[static_cast<std::size_t>(i)];
        const QString name = QString::fromStdString(r.name);
        const bool complete = api::isDownloadInPlace(r.state);
        done += complete ? 1 : 0;
        cell(m_table, i, kName)->setText(name);
        cell(m_table, i, kName)->setToolTip(name);

        auto* bar = qobject_cast<QProgressBar*>(m_table->cellWidget(i, kProgress));
        if (!bar) {
            bar = new QProgressBar();
            bar->setRange(0, 1000);
            bar->setTextVisible(true);
            m_table->setCellWidget(i, kProgress, bar);
        }
        bar->setAccessibleName(tr("Progress of %1").arg(name));
        if (complete) {
            bar->setValue(1000);
            bar->setFormat(tr("100 %"));
        } else if (r.bytesTotal > 0) {
            const double share = std::min(1.0, double(r.bytesDone) / double(r.bytesTotal));
            bar->setValue(static_cast<int>(share * 1000));
            bar->setFormat(QStringLiteral("%1 %").arg(100.0 * share, 0, 'f', 1));
        } else {
            // Size not known yet: no busy animation (it would wake the window all the time), just the bytes.
            bar->setValue(0);
            bar->setFormat(dataSize(double(r.bytesDone)));
        }

        cell(m_table, i, kSize)->setText(r.bytesTotal > 0 ? dataSize(double(r.bytesTotal)) : tr("unknown"));
        cell(m_table, i, kRate)->setText(r.rate > 0 ? tr("%1/s").arg(dataSize(r.rate)) : QString());
        cell(m_table, i, kState)->setText(stateText(r));
        cell(m_table, i, kState)->setToolTip(stateToolTip(r));
    }
    QString summary = modeText(bandwidth);
    summary += tr(" \u00b7 %1 of %2 files in place").arg(done).arg(count);
    if (totalRate > 0) {
        summary += tr(" \u00b7 %1/s now").arg(dataSize(totalRate));
    }
    m_summary->setText(summary);
    if (resized) {
        fitHeight();
    }
}

void DownloadsPanel::fitHeight() {
    const int rows = std::min(m_table->rowCount(), kVisibleRows);
    const int rowHeight = m_table->verticalHeader()->defaultSectionSize();
    const int height =
        m_table->horizontalHeader()->sizeHint().height() + rows * rowHeight + 2 * m_table->frameWidth() + 2;
    m_table->setFixedHeight(height);
}

QString DownloadsPanel::stateText(const api::DownloadEntry& row) {
    using api::DownloadState;
    const QString reason = QString::fromStdString(row.reason);
    switch (row.state) {
    case DownloadState::Checking:
        return tr("checking what is already here");
    case DownloadState::Queued:
        return tr("queued");
    case DownloadState::Waiting:
        return reason.isEmpty() ? tr("retrying soon") : tr("retrying soon (%1)").arg(reason);
    case DownloadState::Downloading:
        return tr("downloading");
    case DownloadState::Ok:
        return row.verified ? tr("done, verified") : tr("done (not verified: no hash to check)");
    case DownloadState::Present:
        return tr("already here, verified");
    case DownloadState::Failed:
        return tr("failed: %1").arg(reason);
    case DownloadState::Stopped:
        return tr("stopped");
    }
    return tr("queued");
}

QString DownloadsPanel::stateToolTip(const api::DownloadEntry& row) {
    QString tip = stateText(row);
    if (row.state == api::DownloadState::Failed && row.retryInSeconds) {
        tip += tr("; nicerd tries again %1").arg(retryText(*row.retryInSeconds));
    }
    return tip;
}

QString DownloadsPanel::modeText(const api::BandwidthMode& mode) {
    using Kind = api::BandwidthMode::Kind;
    const QString cap = mode.capBytesPerSecond ? dataSize(double(*mode.capBytesPerSecond)) : QString();
    switch (mode.kind) {
    case Kind::Nice:
        return cap.isEmpty() ? tr("Bandwidth: nice, gives way to your own traffic")
                             : tr("Bandwidth: nice, gives way to your own traffic, at most %1/s").arg(cap);
    case Kind::Capped:
        return tr("Bandwidth: at most %1/s").arg(cap);
    case Kind::Full:
        return tr("Bandwidth: full speed");
    case Kind::None:
        break;
    }
    return tr("Bandwidth: none");
}

} // namespace nicer::tray
