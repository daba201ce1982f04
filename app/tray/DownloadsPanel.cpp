#include "tray/DownloadsPanel.h"

#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QRegularExpression>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace nicer::tray {

namespace {

enum Column { kName, kProgress, kSize, kRate, kState, kColumns };

// Rows shown before the table scrolls: work units come in handfuls, and the chart keeps the room it needs.
constexpr int kVisibleRows = 6;

bool inPlace(const QString& state) {
    return state.startsWith(QLatin1String("ok")) || state.startsWith(QLatin1String("present"));
}

QString reasonOf(const QString& state) {
    const auto colon = state.indexOf(QLatin1String(": "));
    return colon < 0 ? QString() : state.mid(colon + 2);
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

void DownloadsPanel::setDownloads(const std::vector<DownloadRow>& rows, double totalRate,
                                  const QString& bandwidthMode) {
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
        const DownloadRow& r = rows[static_cast<std::size_t>(i)];
        const bool complete = inPlace(r.state);
        done += complete ? 1 : 0;
        cell(m_table, i, kName)->setText(r.name);
        cell(m_table, i, kName)->setToolTip(r.name);

        auto* bar = qobject_cast<QProgressBar*>(m_table->cellWidget(i, kProgress));
        if (!bar) {
            bar = new QProgressBar();
            bar->setRange(0, 1000);
            bar->setTextVisible(true);
            m_table->setCellWidget(i, kProgress, bar);
        }
        bar->setAccessibleName(tr("Progress of %1").arg(r.name));
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
            bar->setFormat(humanBytes(double(r.bytesDone)));
        }

        cell(m_table, i, kSize)->setText(r.bytesTotal > 0 ? humanBytes(double(r.bytesTotal)) : tr("unknown"));
        cell(m_table, i, kRate)->setText(r.rate > 0 ? tr("%1/s").arg(humanBytes(r.rate)) : QString());
        cell(m_table, i, kState)->setText(stateText(r.state));
        cell(m_table, i, kState)->setToolTip(r.state);
    }
    QString summary = modeText(bandwidthMode);
    summary += tr(" \u00b7 %1 of %2 files in place").arg(done).arg(count);
    if (totalRate > 0) {
        summary += tr(" \u00b7 %1/s now").arg(humanBytes(totalRate));
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

QString DownloadsPanel::humanBytes(double bytes) {
    static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t unit = 0;
    while (bytes >= 1024.0 && unit + 1 < std::size(kUnits)) {
        bytes /= 1024.0;
        ++unit;
    }
    return QStringLiteral("%1 %2").arg(bytes, 0, 'f', unit == 0 ? 0 : 1).arg(QLatin1String(kUnits[unit]));
}

QString DownloadsPanel::stateText(const QString& state) {
    const QString reason = reasonOf(state);
    if (state.startsWith(QLatin1String("checking"))) {
        return tr("checking what is already here");
    }
    if (state.startsWith(QLatin1String("queued"))) {
        return tr("queued");
    }
    if (state.startsWith(QLatin1String("waiting"))) {
        return reason.isEmpty() ? tr("retrying soon") : tr("retrying soon (%1)").arg(reason);
    }
    if (state.startsWith(QLatin1String("downloading"))) {
        return tr("downloading");
    }
    if (state == QLatin1String("ok")) {
        return tr("done, verified");
    }
    if (state.startsWith(QLatin1String("ok"))) {
        return tr("done (not verified: no hash to check)");
    }
    if (state.startsWith(QLatin1String("present"))) {
        return tr("already here, verified");
    }
    if (state.startsWith(QLatin1String("failed"))) {
        return tr("failed: %1").arg(reason);
    }
    if (state.startsWith(QLatin1String("stopped"))) {
        return tr("stopped");
    }
    return state;
}

QString DownloadsPanel::modeText(const QString& mode) {
    static const QRegularExpression capped(QStringLiteral("capped (\\d+) B/s"));
    const auto match = capped.match(mode);
    const QString cap = match.hasMatch() ? humanBytes(match.captured(1).toDouble()) : QString();
    if (mode.startsWith(QLatin1String("nice"))) {
        return cap.isEmpty() ? tr("Bandwidth: nice, gives way to your own traffic")
                             : tr("Bandwidth: nice, gives way to your own traffic, at most %1/s").arg(cap);
    }
    if (!cap.isEmpty()) {
        return tr("Bandwidth: at most %1/s").arg(cap);
    }
    if (mode == QLatin1String("full")) {
        return tr("Bandwidth: full speed");
    }
    return tr("Bandwidth: %1").arg(mode);
}

} // namespace nicer::tray
