#pragma once

#include "tray/DaemonProxy.h"

#include <QGroupBox>

#include <vector>

class QLabel;
class QTableWidget;

namespace nicer::tray {

/**
 * The work units nicerd downloads: one row per file with its progress, size, rate and state, and a line
 * with how the downloads use the link (nice, capped, full) and the total rate. Hidden while nicerd has no
 * downloads, so a CPU-only setup sees nothing of it.
 */
class DownloadsPanel : public QGroupBox {
    Q_OBJECT

public:
    explicit DownloadsPanel(QWidget* parent = nullptr);

    /// Shows @p rows (and hides the panel when there are none), the bandwidth mode nicerd reports and the
    /// total rate in bytes per second.
    void setDownloads(const std::vector<DownloadRow>& rows, double totalRate, const QString& bandwidthMode);

    /// For tests: the table (columns file, progress, size, rate, state) and the bandwidth line.
    QTableWidget* table() const { return m_table; }
    QString summaryText() const;

    /// "1.5 MiB" for people (1024-based, like nicer fetch).
    static QString humanBytes(double bytes);
    /// nicerd's state text ("downloading", "failed: REASON", ...) in the user's language.
    static QString stateText(const QString& state);
    /// nicerd's BandwidthMode ("nice", "capped N B/s", ...) in plain words.
    static QString modeText(const QString& mode);

private:
    void fitHeight();

    QTableWidget* m_table = nullptr;
    QLabel* m_summary = nullptr;
};

} // namespace nicer::tray
