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
 * It has no legend of its own (six names do not fit under it): the window's status panel beside it is its
 * key, each figure's name behind a mark in the colour and style of its series (keyMark()).
 *
 * It draws nothing while hidden: update() only marks it stale, and showing it redraws once.
 */
class CpuChart : public QChartView {
    Q_OBJECT

public:
    explicit CpuChart(const SampleHistory& history, QWidget* parent = nullptr);

    /// What the chart draws: four stacked areas (first, in the order they are stacked) and two lines.
    enum class Key { Work, User, Others, Idle, Cap, Band };
    /// A mark for @p key in the colour its series is drawn in now (a square for an area, a line for the cap,
    /// a dashed line for the band), as rich text for a label.
    QString keyMark(Key key) const;

    /// Redraws from the history when visible; otherwise only remembers to do so when shown.
    void refresh();

    /// Points in the series now (for tests and the benchmark: no chart work while hidden).
    qsizetype pointCount() const;
    /// How many times the series were rebuilt.
    int redrawCount() const { return m_redraws; }

signals:
    /// The colours changed (the palette did): keyMark() gives new marks.
    void keyChanged();

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
