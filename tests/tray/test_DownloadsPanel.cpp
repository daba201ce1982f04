#include "tray/DaemonProxy.h"
#include "tray/DownloadsPanel.h"
#include "tray/MainWindow.h"
#include "tray/TrayTestSupport.h"

#include <QLabel>
#include <QProgressBar>
#include <QTableWidget>
#include <catch2/catch.hpp>

using nicer::tray::DaemonProxy;
using nicer::tray::DownloadRow;
using nicer::tray::DownloadsPanel;

namespace {

std::vector<DownloadRow> someDownloads() {
    return {
        {"units/a.bin", 1048576, 1048576, 0.0, "ok"},
        {"units/b.bin", 262144, 1048576, 131072.0, "downloading"},
        {"c.bin", 0, 0, 0.0, "queued"},
        {"d.bin", 0, 4096, 0.0, "failed: the server answered 404 Not Found; nicerd tries again in 10 min"},
    };
}

QProgressBar* progress(QTableWidget* table, int row) {
    return qobject_cast<QProgressBar*>(table->cellWidget(row, 1));
}

} // namespace

TEST_CASE("the downloads panel shows a row per file with progress, size, rate and state",
          "[tray][downloads]") {
    DownloadsPanel panel;
    panel.show();
    panel.setDownloads(someDownloads(), 131072.0, "nice");
    CHECK(panel.isVisible());
    QTableWidget* table = panel.table();
    REQUIRE(table->rowCount() == 4);
    CHECK(table->item(0, 0)->text() == "units/a.bin");
    CHECK(progress(table, 0)->value() == 1000);
    CHECK(progress(table, 1)->value() == 250);
    CHECK(progress(table, 1)->text() == "25.0 %");
    CHECK(progress(table, 2)->text() == "0 B"); // size unknown: the bytes so far, no busy animation
    CHECK(table->item(1, 2)->text() == "1.0 MiB");
    CHECK(table->item(2, 2)->text() == "unknown");
    CHECK(table->item(1, 3)->text() == "128.0 KiB/s");
    CHECK(table->item(0, 3)->text().isEmpty());
    CHECK(table->item(0, 4)->text() == "done, verified");
    CHECK(table->item(1, 4)->text() == "downloading");
    CHECK(table->item(3, 4)->text().startsWith("failed: the server answered 404 Not Found"));
    CHECK(table->item(3, 4)->toolTip().contains("tries again"));
    CHECK(panel.summaryText().contains("gives way to your own traffic"));
    CHECK(panel.summaryText().contains("1 of 4 files in place"));
    CHECK(panel.summaryText().contains("128.0 KiB/s now"));
    CHECK_FALSE(table->accessibleName().isEmpty());
    CHECK_FALSE(progress(table, 1)->accessibleName().isEmpty());

    // Fewer rows on the next update: the table follows.
    panel.setDownloads({someDownloads()[0]}, 0.0, "full");
    CHECK(table->rowCount() == 1);
    CHECK(panel.summaryText().contains("full speed"));
    CHECK_FALSE(panel.summaryText().contains("now"));
}

TEST_CASE("the downloads panel hides when nicerd has no downloads", "[tray][downloads]") {
    DownloadsPanel panel;
    panel.show();
    panel.setDownloads(someDownloads(), 0.0, "nice");
    CHECK(panel.isVisible());
    panel.setDownloads({}, 0.0, "none");
    CHECK_FALSE(panel.isVisible());
    CHECK(panel.table()->rowCount() == 0);
}

TEST_CASE("nicerd's bandwidth modes and states read as plain words", "[tray][downloads]") {
    CHECK(DownloadsPanel::modeText("nice") == "Bandwidth: nice, gives way to your own traffic");
    CHECK(DownloadsPanel::modeText("nice, capped 524288 B/s").endsWith("at most 512.0 KiB/s"));
    CHECK(DownloadsPanel::modeText("capped 1048576 B/s") == "Bandwidth: at most 1.0 MiB/s");
    CHECK(DownloadsPanel::modeText("full") == "Bandwidth: full speed");
    CHECK(DownloadsPanel::stateText("ok, unverified").contains("not verified"));
    CHECK(DownloadsPanel::stateText("present").startsWith("already here"));
    CHECK(DownloadsPanel::stateText("waiting: the server answered 503") ==
          "retrying soon (the server answered 503)");
    CHECK(DownloadsPanel::stateText("stopped") == "stopped");
    CHECK(DownloadsPanel::stateText("checking").startsWith("checking"));
    CHECK(DownloadsPanel::humanBytes(999) == "999 B");
    CHECK(DownloadsPanel::humanBytes(1536) == "1.5 KiB");
}

TEST_CASE("without nicerd the window shows no downloads and polls nothing", "[tray][downloads]") {
    DaemonProxy daemon(nicer::tray::test::deadBus(QStringLiteral("nicer-dead-bus-downloads")));
    nicer::tray::MainWindow window(daemon, false);
    window.show();
    daemon.start(false);
    CHECK_FALSE(window.downloads()->isVisible());
    CHECK(daemon.downloadPollInterval() == 0);
}
