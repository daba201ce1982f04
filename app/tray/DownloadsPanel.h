#pragma once

#include "api/DownloadEntry.h"

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
    void setDownloads(const std::vector<api::DownloadEntry>& rows, double totalRate,
                      const api::BandwidthMode& bandwidth);

    /// For tests: the table (columns file, progress, size, rate, state) and the bandwidth line.
    QTableWidget* table() const { return m_table; }
    QString summaryText() const;

    /// A file's state, from its fields, in the user's language.
    static QString stateText(const api::DownloadEntry& row);
    /// The state with when nicerd tries a failed file again, for the tooltip.
    static QString stateToolTip(const api::DownloadEntry& row);
    /// nicerd's bandwidth mode (BandwidthMode and BandwidthCap) in plain words.
    static QString modeText(const api::BandwidthMode& mode);

private:
    void fitHeight();

    QTableWidget* m_table = nullptr;
    QLabel* m_summary = nullptr;
};

} // namespace nicer::tray
