#include "tray/CpuChart.h"
#include "tray/DaemonProxy.h"
#include "tray/MainWindow.h"
#include "tray/ParametersPanel.h"
#include "tray/TrayTestSupport.h"

#include <QAreaSeries>
#include <QChart>
#include <QCheckBox>
#include <QFile>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <catch2/catch.hpp>

#include <map>
#include <set>

using nicer::tray::Autostart;
using nicer::tray::CpuChart;
using nicer::tray::DaemonProxy;
using nicer::tray::MainWindow;
using nicer::tray::test::createEmptyFile;
using nicer::tray::test::deadBus;

TEST_CASE("the window builds and explains that there is no session bus", "[tray]") {
    DaemonProxy daemon(deadBus());
    MainWindow window(daemon, false);
    QSignalSpy errors(&daemon, &DaemonProxy::errorOccurred);
    window.show();
    daemon.start(true);
    REQUIRE(errors.count() == 1);
    CHECK(window.errorText().contains("session bus"));
    CHECK(window.chart()->isVisible());
    CHECK_FALSE(window.pauseButton()->isEnabled());
    CHECK_FALSE(window.parameters()->isEnabled());
    CHECK_FALSE(window.pauseButton()->accessibleName().isEmpty());
    CHECK_FALSE(window.chart()->accessibleName().isEmpty());
}

TEST_CASE("the window follows the desktop's dark palette", "[tray]") {
    DaemonProxy daemon(deadBus());
    MainWindow window(daemon, false);
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x20, 0x22, 0x25));
    dark.setColor(QPalette::Base, QColor(0x18, 0x1a, 0x1c));
    dark.setColor(QPalette::Text, QColor(0xee, 0xee, 0xee));
    window.setPalette(dark);
    window.show();
    QCoreApplication::processEvents();
    CHECK(window.chart()->chart()->backgroundBrush().color() == QColor(0x18, 0x1a, 0x1c));
    // The status panel is the chart's key: its marks follow the palette with the chart.
    const QString idleMark = window.chart()->keyMark(CpuChart::Key::Idle);
    CHECK(idleMark.contains(dark.color(QPalette::Mid).name()));
}

TEST_CASE("the status panel is the chart's key: each figure's name has its series' colour", "[tray]") {
    DaemonProxy daemon(deadBus());
    MainWindow window(daemon, false);
    window.show();
    QCoreApplication::processEvents();
    QChart* chart = window.chart()->chart();
    CHECK_FALSE(chart->legend()->isVisible()); // seven names do not fit under the chart: the panel says them
    std::map<QString, QColor> colours;         // each series' name and the colour it is drawn in
    for (QAbstractSeries* s : chart->series()) {
        if (auto* area = qobject_cast<QAreaSeries*>(s)) {
            colours[area->name()] = area->brush().color();
        } else if (auto* line = qobject_cast<QLineSeries*>(s); line && !line->name().isEmpty()) {
            colours[line->name()] = line->pen().color();
        }
    }
    REQUIRE(colours.size() == 7); // four areas, the cap, the band and the temperature
    std::set<QString> keyed;
    for (QLabel* label : window.findChildren<QLabel*>()) {
        for (const auto& [name, colour] : colours) {
            if (label->text().endsWith(QStringLiteral("&nbsp;") + name.toHtmlEscaped())) {
                CHECK(label->text().contains(colour.name()));
                CHECK(label->accessibleName() == name); // a screen reader reads the name alone
                keyed.insert(name);
            }
        }
    }
    CHECK(keyed.size() == colours.size());
    // Distinct marks: no two series share a colour.
    std::set<QString> distinct;
    for (const auto& [name, colour] : colours) {
        distinct.insert(colour.name());
    }
    CHECK(distinct.size() == colours.size());
}

TEST_CASE("the start at login switch writes and removes the autostart entry", "[tray][autostart]") {
    QTemporaryDir home;
    REQUIRE(home.isValid());
    const QString entry = home.filePath("autostart/org.nicer.Tray.desktop");
    DaemonProxy daemon(deadBus());
    MainWindow window(daemon, false, Autostart(home.filePath("autostart")));
    window.show();
    QCheckBox* box = window.startAtLoginBox();
    REQUIRE(box != nullptr);
    CHECK(box->isEnabled());
    CHECK_FALSE(box->accessibleName().isEmpty());
    CHECK_FALSE(box->isChecked());
    box->click();
    CHECK(box->isChecked());
    CHECK(QFile::exists(entry));
    box->click();
    CHECK_FALSE(box->isChecked());
    CHECK_FALSE(QFile::exists(entry));
}

TEST_CASE("the start at login switch shows an existing entry as on", "[tray][autostart]") {
    QTemporaryDir home;
    REQUIRE(home.isValid());
    Autostart autostart(home.filePath("autostart"));
    REQUIRE(autostart.setEnabled(true).ok());
    DaemonProxy daemon(deadBus());
    MainWindow window(daemon, false, autostart);
    CHECK(window.startAtLoginBox()->isChecked());
}

TEST_CASE("a start at login that cannot be written goes back off and says why", "[tray][autostart]") {
    QTemporaryDir home;
    REQUIRE(home.isValid());
    // A file where the folder should be: the write fails even for root, unlike a read-only folder.
    createEmptyFile(home.filePath("config"));
    DaemonProxy daemon(deadBus());
    MainWindow window(daemon, false, Autostart(home.filePath("config/autostart")));
    window.show();
    window.startAtLoginBox()->click();
    CHECK_FALSE(window.startAtLoginBox()->isChecked());
    const QString error = window.errorText();
    INFO(error.toStdString());
    CHECK(error.contains("Start at login"));
    CHECK(error.contains("cannot start at login"));
}

TEST_CASE("inside a flatpak the start at login switch is off and says why", "[tray][autostart]") {
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    createEmptyFile(dir.filePath("flatpak-info"));
    Autostart autostart(dir.filePath("autostart"));
    autostart.setSandboxMarker(dir.filePath("flatpak-info"));
    DaemonProxy daemon(deadBus());
    MainWindow window(daemon, false, autostart);
    CHECK_FALSE(window.startAtLoginBox()->isEnabled());
    CHECK(window.startAtLoginBox()->toolTip().contains("flatpak"));
}
