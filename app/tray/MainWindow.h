#pragma once

#include "api/Actuator.h"
#include "api/DaemonState.h"
#include "tray/Autostart.h"
#include "tray/CpuChart.h"
#include "tray/SampleHistory.h"
#include "tray/TrayState.h"

#include <QWidget>

#include <string>
#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QToolButton;
class QFormLayout;
class QTabWidget;

namespace nicer::tray {

class BoincPanel;
class DaemonProxy;
class DownloadsPanel;
class ParametersPanel;

/// The window: on its Overview tab the CPU chart, the values now, the pause toggle, the downloads (when
/// nicerd has any) and the controller's settings; on its BOINC tab nicerd's BOINC client; above both, errors
/// in plain words with what to do.
class MainWindow : public QWidget {
    Q_OBJECT

public:
    /// @p quitOnClose: no tray host, so closing the window ends the program (nicerd keeps running).
    /// "Start at login" uses the user's autostart folder.
    MainWindow(DaemonProxy& daemon, bool quitOnClose, QWidget* parent = nullptr);
    /// The same, with "Start at login" in the given autostart folder (the tests use a temporary one).
    MainWindow(DaemonProxy& daemon, bool quitOnClose, Autostart autostart, QWidget* parent = nullptr);

    CpuChart* chart() const { return m_chart; }
    ParametersPanel* parameters() const { return m_parameters; }
    DownloadsPanel* downloads() const { return m_downloads; }
    BoincPanel* boinc() const { return m_boinc; }
    QTabWidget* tabs() const { return m_tabs; }
    QToolButton* pauseButton() const { return m_pause; }
    QComboBox* presetBox() const { return m_preset; }
    QCheckBox* startAtLoginBox() const { return m_startAtLogin; }
    /// The state in a line, as the status shows it ("Paused until 18:00 (52 min left)").
    QString statusText() const { return m_statusText; }
    /// The error shown at the top, empty when none.
    QString errorText() const;
    /// A notice that is not an error (e.g. no cpu controller, so a less smooth actuator), empty when none.
    QString noticeText() const;
    const SampleHistory& history() const { return m_history; }

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void buildErrorBar();
    void buildNotice();
    QWidget* buildOverview();
    /// The figures of the last period and what nicerd runs, in @p form.
    void buildValues(QFormLayout* form);
    /// The preset, pause and "Start at login" under the figures.
    void buildControls(QWidget* now, QFormLayout* form);
    QWidget* buildBoincTab();
    void connectDaemon();
    void onSample(const api::Sample& sample);
    void onHistory(const std::vector<api::Sample>& samples);
    void onProperties();
    void onConnection(bool connected);
    void onBus(bool present);
    void showError(const QString& context, const QString& message);
    void updateValues();
    void showPlacement();
    /// nicerd's LastError in the error bar, or the bar hidden once it no longer holds.
    void showDaemonError();
    /// The Actuator property in words.
    static QString actuatorText(api::Actuator actuator);
    void updateStatus();
    /// What the volunteer's rules read: the temperature, the power and their notes.
    void updateRules();
    /// The memory row: the work's memory, the stall beside it, and the memory rule's hold.
    void updateMemory(const api::DaemonState& p);
    void updatePresets();
    void updateBoinc();
    void setStartAtLogin(bool enabled);
    QLabel* addValue(QFormLayout* form, const QString& label, const QString& help);
    /// The same, for a figure the chart draws: its name carries the chart's mark (the panel is the key).
    QLabel* addKeyedValue(QFormLayout* form, CpuChart::Key key, const QString& label, const QString& help);
    void updateChartKey();

    DaemonProxy& m_daemon;
    bool m_quitOnClose;
    SampleHistory m_history;
    CpuChart* m_chart = nullptr;
    /// The names of the figures the chart draws, with their keys (each name's words are its accessible name).
    std::vector<std::pair<QLabel*, CpuChart::Key>> m_chartKey;
    ParametersPanel* m_parameters = nullptr;
    DownloadsPanel* m_downloads = nullptr;
    BoincPanel* m_boinc = nullptr;
    QTabWidget* m_tabs = nullptr;
    QLabel* m_error = nullptr;
    QPushButton* m_startDaemon = nullptr;
    QWidget* m_errorBar = nullptr;
    QLabel* m_notice = nullptr;
    bool m_showingDaemonError = false; ///< the error bar shows nicerd's LastError
    bool m_showingBusError = false;    ///< the error bar says that the session bus is gone
    QLabel* m_status = nullptr;
    QString m_statusText; ///< m_status's words, without its markup
    QLabel* m_user = nullptr;
    QLabel* m_others = nullptr;
    QLabel* m_work = nullptr;
    QLabel* m_idle = nullptr;
    QLabel* m_reserve = nullptr;
    QLabel* m_cap = nullptr;
    QLabel* m_temperature = nullptr;
    QLabel* m_fans = nullptr;
    QFormLayout* m_values = nullptr; ///< the rows of numbers beside the chart
    QLabel* m_power = nullptr;
    QLabel* m_memory = nullptr;
    QLabel* m_presence = nullptr; ///< here, away or not known, and why
    QLabel* m_ruleNotes =
        nullptr; ///< why a rule cannot see what it needs (no sensor, no UPower, no GameMode)
    QLabel* m_overloads = nullptr;
    QLabel* m_actuator = nullptr;
    QLabel* m_placement = nullptr;
    QLabel* m_workload = nullptr;
    QComboBox* m_preset = nullptr;
    QToolButton* m_pause = nullptr; ///< pause and resume, with the snooze's menu
    Autostart m_autostart;
    QCheckBox* m_startAtLogin = nullptr;
};

} // namespace nicer::tray
