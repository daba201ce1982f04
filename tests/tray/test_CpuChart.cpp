#include "tray/CpuChart.h"

#include <QAreaSeries>
#include <QLineSeries>
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
