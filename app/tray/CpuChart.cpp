#include "tray/CpuChart.h"

#include <QAreaSeries>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QEvent>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPainter>
#include <QValueAxis>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

namespace nicer::tray {

namespace {

// Colours that read on light and dark palettes alike.
const QColor kWorkColor(0x2e, 0x9d, 0x5b);
const QColor kUserColor(0x3f, 0x7f, 0xd8);
const QColor kOthersColor(0x9b, 0x59, 0xb6);
const QColor kQuotaColor(0x1b, 0x5e, 0x36);
const QColor kBandColor(0xe0, 0x7b, 0x1f);
const QColor kTemperatureColor(0xc0, 0x39, 0x2b);

double msecs(const api::Sample& s) {
    return static_cast<double>(s.timeUSec) / 1000.0;
}

bool hasTemperature(const api::Sample& s) {
    return s.temperature > api::kNoTemperature;
}

/// The °C axis's range: the readings and the target with some room, in five steps of whole 5 °C so that
/// its ticks fall on the share axis's grid lines.
std::pair<double, double> celsiusRange(double lowest, double highest) {
    const double low = std::floor((lowest - 5.0) / 10.0) * 10.0;
    const double step = std::max(5.0, std::ceil((highest + 5.0 - low) / 25.0) * 5.0);
    return {low, low + 5.0 * step};
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
    // The temperature on its own axis, on the right; both hidden until a sample carries one.
    m_temperature = new QLineSeries();
    m_temperature->setName(tr("CPU temperature"));
    m_target = new QLineSeries(); // no name: the key's temperature row says the target
    m_celsius = new QValueAxis();
    // The unit as the axis's title: Qt Charts reads a label format as Latin-1, which has no room for "°".
    m_celsius->setLabelFormat(QStringLiteral("%d"));
    m_celsius->setTitleText(QStringLiteral("\u00b0C"));
    m_celsius->setTickCount(6);
    m_celsius->setGridLineVisible(false);
    chart->addAxis(m_celsius, Qt::AlignRight);
    for (QLineSeries* s : {m_temperature, m_target}) {
        chart->addSeries(s);
        s->attachAxis(m_time);
        s->attachAxis(m_celsius);
        s->setVisible(false);
    }
    m_celsius->setVisible(false);
    setChart(chart);
    // No antialiasing: it costs the most of a redraw, and axis-aligned areas and 2 px lines do not need it.
    setRenderHint(QPainter::Antialiasing, false);
    setMinimumSize(420, 260);
    setAccessibleName(tr("CPU use over the last minutes"));
    setAccessibleDescription(
        tr("Stacked shares of the whole machine: volunteer work, your programs, other users and services, "
           "and idle, with the work's cap and the reserve band as lines, the CPU's temperature on the right, "
           "and the times your rules or your pause held the work marked along the top."));
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
        axis->setTitleBrush(pal.color(QPalette::Text));
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
    const QColor temperature = dark ? kTemperatureColor.lighter(150) : kTemperatureColor;
    m_temperature->setPen(QPen(temperature, 2));
    m_target->setPen(QPen(temperature, 1, Qt::DotLine));
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
    if (key == Key::Temperature) {
        return mark(m_temperature->pen().color(), QChar(0x2500)); // ─
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
    redrawTemperature();
    findSpans();
    viewport()->update(); // the spans are painted over the series, which need not all have changed
}

void CpuChart::setTemperatureTarget(double celsius) {
    if (celsius != m_targetCelsius) {
        m_targetCelsius = celsius;
        refresh();
    }
}

void CpuChart::redrawTemperature() {
    const auto& points = m_history.points();
    QList<QPointF> line;
    double lowest = m_targetCelsius > 0.0 ? m_targetCelsius : 1e9;
    double highest = m_targetCelsius > 0.0 ? m_targetCelsius : -1e9;
    for (const ChartPoint& p : points) {
        // A period without a reading leaves a straight line from the one before to the one after.
        if (hasTemperature(p.sample)) {
            line.append({msecs(p.sample), p.sample.temperature});
            lowest = std::min(lowest, p.sample.temperature);
            highest = std::max(highest, p.sample.temperature);
        }
    }
    const bool shown = !line.isEmpty();
    m_temperature->replace(line);
    QList<QPointF> target;
    if (shown && m_targetCelsius > 0.0) {
        target = {{msecs(points.front().sample), m_targetCelsius},
                  {msecs(points.back().sample), m_targetCelsius}};
    }
    m_target->replace(target);
    m_temperature->setVisible(shown);
    m_target->setVisible(!target.isEmpty());
    m_celsius->setVisible(shown);
    if (shown) {
        const auto [low, high] = celsiusRange(lowest, highest);
        m_celsius->setRange(low, high);
    }
}

void CpuChart::findSpans() {
    m_spans.clear();
    double previous = -1.0; // the time of the sample before, where the period of this one began
    for (const ChartPoint& p : m_history.points()) {
        const auto& s = p.sample;
        const double t = msecs(s);
        const bool held = s.paused || !s.heldBy.empty();
        // The volunteer's own pause comes first, as it does for the tray's state.
        const std::string rule = s.paused ? std::string() : s.heldBy;
        if (held) {
            if (!m_spans.empty() && m_spans.back().rule == rule && m_spans.back().toMSecs == previous) {
                m_spans.back().toMSecs = t;
            } else {
                m_spans.push_back({previous >= 0.0 ? previous : t, t, rule});
            }
        }
        previous = t;
    }
}

namespace {

/// How the chart shows a rule's spans: its words and its colour.
struct RuleLook {
    std::string_view rule; ///< control::ruleName
    const char* label;
    QColor color;
};

/// The rule's look; null for a rule newer than the tray.
const RuleLook* lookOf(const std::string& rule) {
    static const RuleLook kLooks[] = {
        {"temperature", QT_TRANSLATE_NOOP("nicer::tray::CpuChart", "temperature"), kTemperatureColor},
        {"fan", QT_TRANSLATE_NOOP("nicer::tray::CpuChart", "fans"), QColor(0x17, 0x8f, 0xa6)},
        {"battery", QT_TRANSLATE_NOOP("nicer::tray::CpuChart", "battery"), QColor(0xb0, 0x7d, 0x0b)},
        {"power-saver", QT_TRANSLATE_NOOP("nicer::tray::CpuChart", "power saver"), QColor(0xb0, 0x7d, 0x0b)},
        {"game", QT_TRANSLATE_NOOP("nicer::tray::CpuChart", "game"), QColor(0xc2, 0x2e, 0x7a)},
        {"program", QT_TRANSLATE_NOOP("nicer::tray::CpuChart", "program"), QColor(0x8d, 0x5f, 0x4a)},
        {"profile", QT_TRANSLATE_NOOP("nicer::tray::CpuChart", "profile"), QColor(0x5a, 0x6e, 0xa8)},
        {"schedule", QT_TRANSLATE_NOOP("nicer::tray::CpuChart", "schedule"), QColor(0x4f, 0x7a, 0x3a)},
        {"memory", QT_TRANSLATE_NOOP("nicer::tray::CpuChart", "memory"), QColor(0x7b, 0x4f, 0xa6)},
    };
    const auto* it = std::find_if(std::begin(kLooks), std::end(kLooks),
                                  [&](const RuleLook& look) { return look.rule == rule; });
    return it == std::end(kLooks) ? nullptr : it;
}

} // namespace

QString CpuChart::spanLabel(const Span& span) {
    if (span.rule.empty()) {
        return tr("paused"); // the rules say their names; this is the volunteer's own
    }
    const RuleLook* look = lookOf(span.rule);
    return look ? tr(look->label) : QString::fromStdString(span.rule);
}

QColor CpuChart::spanColor(const Span& span) {
    if (span.rule.empty()) {
        return QColor(0x80, 0x80, 0x80);
    }
    const RuleLook* look = lookOf(span.rule);
    return look ? look->color : QColor(0x8d, 0x5f, 0x4a); // a rule newer than the tray: as a named program
}

void CpuChart::drawForeground(QPainter* painter, const QRectF& rect) {
    QChartView::drawForeground(painter, rect);
    if (m_spans.empty()) {
        return;
    }
    const QRectF plot = chart()->mapRectToScene(chart()->plotArea());
    const QFontMetricsF metrics(font());
    const double strip = metrics.height() + 4.0;
    painter->save();
    painter->setClipRect(plot);
    for (const Span& span : m_spans) {
        const double from = chart()->mapToScene(chart()->mapToPosition({span.fromMSecs, 0}, m_work)).x();
        const double to = chart()->mapToScene(chart()->mapToPosition({span.toMSecs, 0}, m_work)).x();
        const QRectF band(QPointF(std::max(from, plot.left()), plot.top()),
                          QPointF(std::min(std::max(to, from + 1.0), plot.right()), plot.bottom()));
        if (band.width() <= 0.0) {
            continue;
        }
        QColor color = spanColor(span);
        QColor tint = color;
        tint.setAlpha(span.rule.empty() ? 25 : 40);
        painter->fillRect(band, tint);
        const QRectF top(band.topLeft(), QSizeF(band.width(), strip));
        color.setAlpha(220);
        // The volunteer's own pause hatched, so that it reads apart from the rules without colour too.
        if (span.rule.empty()) {
            color.setAlpha(110);
            painter->fillRect(top, palette().color(QPalette::Base));
        }
        painter->fillRect(top, span.rule.empty() ? QBrush(color, Qt::BDiagPattern) : QBrush(color));
        const QString label = metrics.elidedText(spanLabel(span), Qt::ElideRight, top.width() - 6.0);
        if (!label.isEmpty() && label != QStringLiteral("\u2026")) {
            painter->setPen(span.rule.empty() ? palette().color(QPalette::Text) : QColor(Qt::white));
            painter->drawText(top.adjusted(3.0, 0.0, -3.0, 0.0), Qt::AlignVCenter | Qt::AlignLeft, label);
        }
    }
    painter->restore();
}

} // namespace nicer::tray
