#pragma once

#include "tray/SampleHistory.h"

#include <QChartView>

#include <string>
#include <vector>

class QAreaSeries;
class QDateTimeAxis;
class QLineSeries;
class QValueAxis;

namespace nicer::tray {

/**
 * The machine's CPU over the last minutes, stacked from the bottom: the volunteer work, the user's own
 * programs (under their user manager), other users and services (outside it: what the work's idle weight
 * does not protect, so what the quota answers), idle; with the work's cap (quota) and the top of the reserve
 * band (1 - m x b) as lines, so the idle area above the band line is the reserve the controller keeps.
 *
 * It has no legend of its own (seven names do not fit under it): the window's status panel beside it is its
 * key, each figure's name behind a mark in the colour and style of its series (keyMark()).
 *
 * When the samples carry the CPU's temperature it is a line on a second axis, in °C, on the right, with the
 * temperature target as a dotted line. The spans in which one of the volunteer's rules held the work
 * (api::Sample::heldBy) are tinted, with a strip along the top naming the rule ("battery", "game"); the
 * volunteer's own pause is a grey hatched strip, "paused".
 *
 * It draws nothing while hidden: update() only marks it stale, and showing it redraws once.
 */
class CpuChart : public QChartView {
    Q_OBJECT

public:
    explicit CpuChart(const SampleHistory& history, QWidget* parent = nullptr);

    /// What the chart draws: four stacked areas (first, in the order they are stacked) and three lines.
    enum class Key { Work, User, Others, Idle, Cap, Band, Temperature };
    /// A mark for @p key in the colour its series is drawn in now (a square for an area, a line for the cap
    /// and the temperature, a dashed line for the band), as rich text for a label.
    QString keyMark(Key key) const;

    /// A stretch of time in which the work was held: by one of the volunteer's rules, or by their own pause.
    struct Span {
        double fromMSecs = 0.0; ///< the start of the period of its first sample, ms since the epoch
        double toMSecs = 0.0;   ///< its last sample's time
        std::string rule;       ///< api::Sample::heldBy; empty for the volunteer's own pause
        bool operator==(const Span&) const = default;
    };
    /// The spans the chart marks now, oldest first.
    const std::vector<Span>& spans() const { return m_spans; }
    /// The words a span's strip says: "battery", "power saver"; "paused" for the volunteer's own pause.
    static QString spanLabel(const Span& span);
    /// The colour a span is marked in.
    static QColor spanColor(const Span& span);

    /// The temperature target the rule holds now (api::DaemonState::temperatureTargetInUse), drawn as a
    /// dotted line beside the temperature; 0: none.
    void setTemperatureTarget(double celsius);

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
    /// The spans' tints and strips, over the series.
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    void applyPalette();
    void redraw();
    /// The temperature line, its target and its axis from the history: hidden when no sample has one.
    void redrawTemperature();
    void findSpans();

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
    QLineSeries* m_temperature = nullptr;
    QLineSeries* m_target = nullptr;
    QDateTimeAxis* m_time = nullptr;
    QValueAxis* m_celsius = nullptr;
    double m_targetCelsius = 0.0;
    std::vector<Span> m_spans;
    bool m_stale = true;
    int m_redraws = 0;
};

} // namespace nicer::tray
