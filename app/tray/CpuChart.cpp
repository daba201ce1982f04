#include "tray/CpuChart.h"

#include <QAreaSeries>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QEvent>
#include <QLegendMarker>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>
#include <array>

namespace nicer::tray {

namespace {

// Colours that read on light and dark palettes alike.
const QColor kWorkColor(0x2e, 0x9d, 0x5b);
const QColor kUserColor(0x3f, 0x7f, 0xd8);
const QColor kOthersColor(0x9b, 0x59, 0xb6);
const QColor kQuotaColor(0x1b, 0x5e, 0x36);
const QColor kBandColor(0xe0, 0x7b, 0x1f);

double msecs(const api::Sample& s) {
    return static_cast<double>(s.timeUSec) / 1000.0;
}

} // namespace

CpuChart::CpuChart(const SampleHistory& history, QWidget* parent)
    : QChartView(parent)
    , m_history(history) {
    auto* chart = new QChart();
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->legend()->hide();
    chart->setAnimationOptions(QChart::NoAnimation);

    m_zero = new QLineSeries(chart);
    m_workTop = new QLineSeries(chart);
    m_userTop = new QLineSeries(chart);
    m_othersTop = new QLineSeries(chart);
    m_idleTop = new QLineSeries(chart);
    m_work = new QAreaSeries(m_workTop, m_zero);
    m_user = new QAreaSeries(m_userTop, m_workTop);
    m_others = new QAreaSeries(m_othersTop, m_userTop);
    m_idle = new QAreaSeries(m_idleTop, m_othersTop);
    m_work->setName(tr("Volunteer work"));
    m_user->setName(tr("Your programs"));
    m_others->setName(tr("Other users and services"));
    m_idle->setName(tr("Idle"));
    m_quota = new QLineSeries();
    m_quota->setName(tr("Work cap"));
    m_band = new QLineSeries();
    m_band->setName(tr("Reserve band"));

    m_time = new QDateTimeAxis();
    m_time->setFormat("HH:mm:ss");
    m_time->setTickCount(6);
    auto* share = new QValueAxis();
    share->setRange(0, 100);
    share->setLabelFormat("%d %%");
    share->setTickCount(6);
    chart->addAxis(m_time, Qt::AlignBottom);
    chart->addAxis(share, Qt::AlignLeft);
    for (QAbstractSeries* s :
         std::initializer_list<QAbstractSeries*>{m_work, m_user, m_others, m_idle, m_quota, m_band}) {
        chart->addSeries(s);
        s->attachAxis(m_time);
        s->attachAxis(share);
    }
    setChart(chart);
    // No antialiasing: it costs the most of a redraw, and axis-aligned areas and 2 px lines do not need it.
    setRenderHint(QPainter::Antialiasing, false);
    setMinimumSize(420, 260);
    setAccessibleName(tr("CPU use over the last minutes"));
    setAccessibleDescription(
        tr("Stacked shares of the whole machine: volunteer work, your programs, other users and services, "
           "and idle, with the work's cap and the reserve band as lines."));
    applyPalette();
}

void CpuChart::applyPalette() {
    const QPalette pal = palette();
    const bool dark = pal.color(QPalette::Window).lightness() < 128;
    QChart* c = chart();
    c->setBackgroundBrush(pal.color(QPalette::Base));
    c->setBackgroundPen(Qt::NoPen);
    c->setPlotAreaBackgroundVisible(false);
    for (QAbstractAxis* axis : c->axes()) {
        axis->setLabelsColor(pal.color(QPalette::Text));
        axis->setGridLineColor(pal.color(QPalette::Mid));
        axis->setLinePenColor(pal.color(QPalette::Mid));
    }
    auto fill = [](QAreaSeries* s, QColor color, int alpha) {
        QColor f = color;
        f.setAlpha(alpha);
        s->setBrush(f);
        s->setPen(QPen(color, 1));
    };
    fill(m_work, kWorkColor, 170);
    fill(m_user, kUserColor, 170);
    fill(m_others, kOthersColor, 170);
    fill(m_idle, pal.color(QPalette::Mid), dark ? 60 : 40);
    m_quota->setPen(QPen(dark ? kWorkColor.lighter(150) : kQuotaColor, 2));
    m_band->setPen(QPen(kBandColor, 2, Qt::DashLine));
    emit keyChanged();
}

QString CpuChart::keyMark(Key key) const {
    const auto mark = [](const QColor& color, QChar glyph) {
        return QStringLiteral("<span style=\"color:%1\">%2</span>").arg(color.name(), QString(glyph));
    };
    if (key == Key::Cap) {
        return mark(m_quota->pen().color(), QChar(0x2501)); // ━
    }
    if (key == Key::Band) {
        return mark(m_band->pen().color(), QChar(0x254D)); // ╍
    }
    const std::array<const QAreaSeries*, 4> areas{m_work, m_user, m_others, m_idle};      // in Key's order
    return mark(areas.at(static_cast<std::size_t>(key))->brush().color(), QChar(0x25A0)); // ■
}

void CpuChart::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
    }
    QChartView::changeEvent(event);
}

void CpuChart::showEvent(QShowEvent* event) {
    QChartView::showEvent(event);
    if (m_stale) {
        redraw();
    }
}

void CpuChart::refresh() {
    m_stale = true;
    if (isVisible()) {
        redraw();
    }
}

qsizetype CpuChart::pointCount() const {
    return m_workTop->count();
}

void CpuChart::redraw() {
    m_stale = false;
    ++m_redraws;
    const auto& points = m_history.points();
    QList<QPointF> zero, work, user, others, idle, quota, band;
    for (auto* list : {&zero, &work, &user, &others, &idle, &quota, &band}) {
        list->reserve(static_cast<qsizetype>(points.size()));
    }
    for (const ChartPoint& p : points) {
        const auto& s = p.sample;
        const double t = msecs(s);
        zero.append({t, 0});
        work.append({t, 100 * s.background});
        // A nicerd that cannot read the user manager's CPU time (outside -1) counts it all as yours.
        user.append({t, 100 * (s.background + api::yourPrograms(s.foreground, s.outside))});
        others.append({t, 100 * (s.background + s.foreground)});
        idle.append({t, 100});
        quota.append({t, 100 * s.quota});
        band.append({t, 100 * (1 - p.reserveKept())});
    }
    // replace() redraws once per series, where append() would redraw once per point.
    m_zero->replace(zero);
    m_workTop->replace(work);
    m_userTop->replace(user);
    m_othersTop->replace(others);
    m_idleTop->replace(idle);
    m_quota->replace(quota);
    m_band->replace(band);
    if (!points.empty()) {
        // The span, or less while nicerd has run for less: a fresh start fills the width.
        const double newest = msecs(points.back().sample);
        const double oldest = std::min(newest - 1000.0, msecs(points.front().sample));
        m_time->setRange(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(oldest)),
                         QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(newest)));
    }
}

} // namespace nicer::tray
