#pragma once

#include "tray/SampleHistory.h"

#include <QChartView>

class QAreaSeries;
class QDateTimeAxis;
class QLineSeries;

namespace nicer::tray {

/**
 * The machine's CPU over the last minutes, stacked from the bottom: the volunteer work, the user's own
 * programs (under their user manager), other users and services (outside it: what the work's idle weight
 * does not protect, so what the quota answers), idle; with the work's cap (quota) and the top of the reserve
 * band (1 - m x b) as lines, so the idle area above the band line is the reserve the controller keeps.
 *
 * It draws nothing while hidden: update() only marks it stale, and showing it redraws once.
 */
class CpuChart : public QChartView {
    Q_OBJECT

public:
    explicit CpuChart(const SampleHistory& history, QWidget* parent = nullptr);

    /// Redraws from the history when visible; otherwise only remembers to do so when shown.
    void refresh();

    /// Points in the series now (for tests and the benchmark: no chart work while hidden).
    qsizetype pointCount() const;
    /// How many times the series were rebuilt.
    int redrawCount() const { return m_redraws; }

protected:
    void showEvent(QShowEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void applyPalette();
    void redraw();

    const SampleHistory& m_history;
    QLineSeries* m_workTop = nullptr;
    QLineSeries* m_userTop = nullptr;
    QLineSeries* m_othersTop = nullptr;
    QLineSeries* m_idleTop = nullptr;
    QLineSeries* m_zero = nullptr;
    QAreaSeries* m_work = nullptr;
    QAreaSeries* m_user = nullptr;
    QAreaSeries* m_others = nullptr;
    QAreaSeries* m_idle = nullptr;
    QLineSeries* m_quota = nullptr;
    QLineSeries* m_band = nullptr;
    QDateTimeAxis* m_time = nullptr;
    bool m_stale = true;
    int m_redraws = 0;
};

} // namespace nicer::tray
