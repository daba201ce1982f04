#include "tray/CpuChart.h"

#include <QAreaSeries>
#include <QCoreApplication>
#include <QLineSeries>
#include <QValueAxis>
#include <catch2/catch.hpp>

using nicer::api::Sample;
using nicer::tray::CpuChart;
using nicer::tray::SampleHistory;

namespace {

void fill(SampleHistory& h, int count) {
    for (int i = 0; i < count; ++i) {
        Sample s;
        s.timeUSec = 1'000'000ull * static_cast<unsigned>(1000 + i);
        s.foreground = 0.2;
        s.background = 0.7;
        s.idle = 0.1;
        s.quota = 0.75;
        s.multiplier = 2;
        h.append(s, 0.05);
    }
}

QLineSeries* lineNamed(CpuChart& chart, const QString& name) {
    for (auto* s : chart.chart()->series()) {
        if (s->name() == name) {
            return qobject_cast<QLineSeries*>(s);
        }
    }
    return nullptr;
}

} // namespace

TEST_CASE("the chart draws the history as stacked shares with the cap and band lines", "[tray]") {
    SampleHistory history(std::chrono::seconds(300));
    CpuChart chart(history);
    chart.show();
    fill(history, 30);
    chart.refresh();
    REQUIRE(chart.pointCount() == 30);

    QAreaSeries* work = nullptr;
    QAreaSeries* user = nullptr;
    for (auto* s : chart.chart()->series()) {
        if (s->name() == "Volunteer work") {
            work = qobject_cast<QAreaSeries*>(s);
        } else if (s->name() == "Your programs") {
            user = qobject_cast<QAreaSeries*>(s);
        }
    }
    REQUIRE(work);
    REQUIRE(user);
    // Work at the bottom, the user's programs stacked on it, in percent of the machine.
    CHECK(work->upperSeries()->at(0).y() == Approx(70));
    CHECK(user->lowerSeries()->at(0).y() == Approx(70));
    CHECK(user->upperSeries()->at(0).y() == Approx(90));
    auto* cap = lineNamed(chart, "Work cap");
    auto* band = lineNamed(chart, "Reserve band");
    REQUIRE(cap);
    REQUIRE(band);
    CHECK(cap->at(29).y() == Approx(75));
    CHECK(band->at(29).y() == Approx(90)); // 100 - 2 x 5 %
}

TEST_CASE("the chart does no work while hidden and catches up when shown", "[tray]") {
    SampleHistory history(std::chrono::seconds(300));
    CpuChart chart(history);
    chart.show();
    fill(history, 5);
    chart.refresh();
    const int drawn = chart.redrawCount();
    chart.hide();
    fill(history, 20);
    for (int i = 0; i < 20; ++i) {
        chart.refresh();
    }
    CHECK(chart.redrawCount() == drawn);
    CHECK(chart.pointCount() == 5);
    chart.show();
    CHECK(chart.redrawCount() == drawn + 1);
    CHECK(chart.pointCount() == static_cast<qsizetype>(history.points().size()));
}

TEST_CASE("the chart separates other users and services from your programs", "[tray][outside]") {
    SampleHistory history(std::chrono::seconds(300));
    CpuChart chart(history);
    chart.show();
    Sample s;
    s.timeUSec = 1'000'000'000;
    s.background = 0.3;
    s.foreground = 0.5;
    s.outside = 0.3; // of the foreground's 0.5: 0.2 yours, 0.3 outside the user manager
    s.idle = 0.2;
    s.quota = 0.6;
    s.multiplier = 2;
    s.outsideSignal = true;
    history.append(s, 0.05);
    // Nothing outside: the outside signal keeps no band and no cap.
    s.timeUSec += 1'000'000;
    s.outside = 0.0;
    s.quota = 1.0;
    s.multiplier = 1;
    history.append(s, 0.05);
    // A nicerd that cannot tell the two apart: all of it is yours.
    s.timeUSec += 1'000'000;
    s.outside = -1.0;
    s.outsideSignal = false;
    history.append(s, 0.05);
    chart.refresh();

    QAreaSeries* user = nullptr;
    QAreaSeries* others = nullptr;
    for (auto* series : chart.chart()->series()) {
        if (series->name() == "Your programs") {
            user = qobject_cast<QAreaSeries*>(series);
        } else if (series->name() == "Other users and services") {
            others = qobject_cast<QAreaSeries*>(series);
        }
    }
    REQUIRE(user);
    REQUIRE(others);
    CHECK(user->upperSeries()->at(0).y() == Approx(50));
    CHECK(others->lowerSeries()->at(0).y() == Approx(50));
    CHECK(others->upperSeries()->at(0).y() == Approx(80));
    CHECK(user->upperSeries()->at(1).y() == Approx(80));
    CHECK(others->upperSeries()->at(1).y() == Approx(80));
    CHECK(user->upperSeries()->at(2).y() == Approx(80));
    CHECK(others->upperSeries()->at(2).y() == Approx(80));
    auto* band = lineNamed(chart, "Reserve band");
    REQUIRE(band);
    CHECK(band->at(0).y() == Approx(90));  // 100 - 2 x 5 %: something outside, the band is kept
    CHECK(band->at(1).y() == Approx(100)); // nothing outside needed it
    CHECK(band->at(2).y() == Approx(95));  // the thesis's signal always keeps one: 100 - 1 x 5 %
}

namespace {

/// The right-hand axis, in °C.
QValueAxis* celsiusAxis(CpuChart& chart) {
    const auto axes = chart.chart()->axes(Qt::Vertical);
    for (QAbstractAxis* axis : axes) {
        if (axis->alignment() == Qt::AlignRight) {
            return qobject_cast<QValueAxis*>(axis);
        }
    }
    return nullptr;
}

/// @p count samples a second apart from @p first, each held by @p heldBy (paused by the volunteer for
/// "you"), at @p celsius.
void fillHeld(SampleHistory& h, int first, int count, const std::string& heldBy, double celsius) {
    for (int i = first; i < first + count; ++i) {
        Sample s;
        s.timeUSec = 1'000'000ull * static_cast<unsigned>(1000 + i);
        s.foreground = 0.2;
        s.background = heldBy.empty() ? 0.7 : 0.0;
        s.idle = 1.0 - s.foreground - s.background;
        s.quota = heldBy.empty() ? 0.75 : 0.0;
        s.paused = heldBy == "you";
        s.heldBy = s.paused ? std::string() : heldBy;
        s.temperature = celsius;
        h.append(s, 0.05);
    }
}

} // namespace

TEST_CASE("the chart draws the CPU's temperature on a right axis only when the samples carry it",
          "[tray][rules]") {
    SampleHistory history(std::chrono::seconds(300));
    CpuChart chart(history);
    chart.show();
    fill(history, 10); // no sensor: kNoTemperature
    chart.refresh();
    auto* temperature = lineNamed(chart, "CPU temperature");
    REQUIRE(temperature);
    QValueAxis* celsius = celsiusAxis(chart);
    REQUIRE(celsius);
    CHECK(temperature->count() == 0);
    CHECK_FALSE(temperature->isVisible());
    CHECK_FALSE(celsius->isVisible());

    fillHeld(history, 10, 10, "", 71.5);
    fillHeld(history, 20, 5, "", nicer::api::kNoTemperature); // a period the sensor did not answer
    fillHeld(history, 25, 5, "", 83.0);
    chart.setTemperatureTarget(80.0);
    REQUIRE(temperature->count() == 15);
    CHECK(temperature->isVisible());
    CHECK(celsius->isVisible());
    CHECK(temperature->at(0).y() == Approx(71.5));
    CHECK(temperature->at(14).y() == Approx(83.0));
    CHECK(temperature->attachedAxes().contains(celsius));
    CHECK(celsius->min() <= 71.5);
    CHECK(celsius->max() >= 83.0);
    CHECK(celsius->titleText() == QStringLiteral("\u00b0C"));
    // The target as a dotted line across the span.
    bool target = false;
    for (auto* s : chart.chart()->series()) {
        if (auto* line = qobject_cast<QLineSeries*>(s);
            line && line != temperature && line->attachedAxes().contains(celsius) && line->count() == 2) {
            target = line->isVisible() && line->at(0).y() == Approx(80.0) && line->at(1).y() == Approx(80.0);
        }
    }
    CHECK(target);
    // The key's mark is the line's colour.
    CHECK(chart.keyMark(CpuChart::Key::Temperature).contains(temperature->pen().color().name()));
}

TEST_CASE("the chart marks the spans a rule held the work, named, apart from the volunteer's pause",
          "[tray][rules]") {
    SampleHistory history(std::chrono::seconds(300));
    CpuChart chart(history);
    chart.resize(800, 400);
    chart.show();
    QCoreApplication::processEvents(); // the chart lays out its plot area
    fill(history, 20);
    fillHeld(history, 20, 20, "battery", 60.0);
    fillHeld(history, 40, 10, "", 60.0);
    fillHeld(history, 50, 10, "you", 60.0);
    fillHeld(history, 60, 10, "game", 60.0);
    fillHeld(history, 70, 10, "", 60.0);
    chart.refresh();

    using Span = CpuChart::Span;
    const std::vector<Span> expected{
        {1'019'000, 1'039'000, "battery"}, {1'049'000, 1'059'000, ""}, {1'059'000, 1'069'000, "game"}};
    CHECK(chart.spans() == expected);
    CHECK(CpuChart::spanLabel(expected[0]) == "battery");
    CHECK(CpuChart::spanLabel(expected[1]) == "paused");
    CHECK(CpuChart::spanLabel(expected[2]) == "game");
    CHECK(CpuChart::spanColor(expected[0]) != CpuChart::spanColor(expected[1]));
    CHECK(CpuChart::spanColor(expected[0]) != CpuChart::spanColor(expected[2]));

    // Drawn: the strip along the top of the plot is in the rule's colour within the span, not outside it.
    const QImage image = chart.grab().toImage();
    const QRectF plot = chart.chart()->plotArea();
    QAbstractSeries* work = chart.chart()->series().at(0);
    const auto x = [&](double msecs) {
        return static_cast<int>(chart.chart()->mapToPosition({msecs, 0}, work).x());
    };
    const int y = static_cast<int>(plot.top()) + 4;
    const QColor inBattery = image.pixelColor(x(1'029'000), y);
    const QColor inGame = image.pixelColor(x(1'064'000), y);
    const QColor outside = image.pixelColor(x(1'045'000), y);
    const auto near = [](const QColor& a, const QColor& b) {
        return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) + std::abs(a.blue() - b.blue()) <
               90; // the strip is a little translucent
    };
    CHECK(near(inBattery, CpuChart::spanColor(expected[0])));
    CHECK(near(inGame, CpuChart::spanColor(expected[2])));
    CHECK_FALSE(near(outside, CpuChart::spanColor(expected[0])));
    CHECK_FALSE(near(outside, CpuChart::spanColor(expected[2])));

    // Once the history no longer holds a span, it is not marked.
    history.reset({}, 0.05);
    chart.refresh();
    CHECK(chart.spans().empty());
}
