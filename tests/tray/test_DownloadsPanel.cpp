#include "tray/DaemonProxy.h"
#include "tray/DownloadsPanel.h"
#include "tray/MainWindow.h"
#include "tray/TrayTestSupport.h"

#include <QLabel>
#include <QProgressBar>
#include <QTableWidget>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

using nicer::api::BandwidthMode;
using nicer::api::DownloadEntry;
using nicer::api::DownloadState;
using nicer::tray::DaemonProxy;
using nicer::tray::DownloadsPanel;

namespace {

const BandwidthMode kNice{BandwidthMode::Kind::Nice, std::nullopt};
const BandwidthMode kFull{BandwidthMode::Kind::Full, std::nullopt};

DownloadEntry row(std::string name, DownloadState state, std::string reason = {}, bool verified = true) {
    DownloadEntry r;
    r.name = std::move(name);
    r.state = state;
    r.reason = std::move(reason);
    r.verified = verified;
    return r;
}

std::vector<DownloadEntry> someDownloads() {
    DownloadEntry a = row("units/a.bin", DownloadState::Ok);
    a.bytesDone = a.bytesTotal = 1048576;
    DownloadEntry b = row("units/b.bin", DownloadState::Downloading);
    b.bytesDone = 262144;
    b.bytesTotal = 1048576;
    b.rate = 131072.0;
    DownloadEntry d = row("d.bin", DownloadState::Failed, "the server answered 404 Not Found");
    d.bytesTotal = 4096;
    d.retryInSeconds = 600;
    return {a, b, row("c.bin", DownloadState::Queued), d};
}

QProgressBar* progress(QTableWidget* table, int row) {
    return qobject_cast<QProgressBar*>(table->cellWidget(row, 1));
}

} // namespace

TEST_CASE("the downloads panel shows a row per file with progress, size, rate and state",
          "[tray][downloads]") {
    DownloadsPanel panel;
    panel.show();
    panel.setDownloads(someDownloads(), 131072.0, kNice);
    CHECK(panel.isVisible());
    QTableWidget* table = panel.table();
    REQUIRE(table->rowCount() == 4);
    CHECK(table->item(0, 0)->text() == "units/a.bin");
    CHECK(progress(table, 0)->value() == 1000);
    CHECK(progress(table, 1)->value() == 250);
    CHECK(progress(table, 1)->text() == "25.0 %");
    // Size unknown: the bytes so far, no busy animation. QLocale::formattedDataSize writes "0 bytes".
    CHECK(progress(table, 2)->text() == "0 bytes");
    CHECK(table->item(1, 2)->text() == "1.0 MiB");
    CHECK(table->item(2, 2)->text() == "unknown");
    CHECK(table->item(1, 3)->text() == "128.0 KiB/s");
    CHECK(table->item(0, 3)->text().isEmpty());
    CHECK(table->item(0, 4)->text() == "done, verified");
    CHECK(table->item(1, 4)->text() == "downloading");
    CHECK(table->item(3, 4)->text().startsWith("failed: the server answered 404 Not Found"));
    CHECK(table->item(3, 4)->toolTip().contains("tries again in 10 min"));
    CHECK(panel.summaryText().contains("gives way to your own traffic"));
    CHECK(panel.summaryText().contains("1 of 4 files in place"));
    CHECK(panel.summaryText().contains("128.0 KiB/s now"));
    CHECK_FALSE(table->accessibleName().isEmpty());
    CHECK_FALSE(progress(table, 1)->accessibleName().isEmpty());

    // Fewer rows on the next update: the table follows.
    panel.setDownloads({someDownloads()[0]}, 0.0, kFull);
    CHECK(table->rowCount() == 1);
    CHECK(panel.summaryText().contains("full speed"));
    CHECK_FALSE(panel.summaryText().contains("now"));
}

TEST_CASE("the downloads panel hides when nicerd has no downloads", "[tray][downloads]") {
    DownloadsPanel panel;
    panel.show();
    panel.setDownloads(someDownloads(), 0.0, kNice);
    CHECK(panel.isVisible());
    panel.setDownloads({}, 0.0, BandwidthMode{});
    CHECK_FALSE(panel.isVisible());
    CHECK(panel.table()->rowCount() == 0);
}

TEST_CASE("nicerd's bandwidth modes and states read as plain words, from their fields", "[tray][downloads]") {
    CHECK(DownloadsPanel::modeText(kNice) == "Bandwidth: nice, gives way to your own traffic");
    CHECK(DownloadsPanel::modeText({BandwidthMode::Kind::Nice, 524288}).endsWith("at most 512.0 KiB/s"));
    CHECK(DownloadsPanel::modeText({BandwidthMode::Kind::Capped, 1048576}) == "Bandwidth: at most 1.0 MiB/s");
    CHECK(DownloadsPanel::modeText(kFull) == "Bandwidth: full speed");
    CHECK(DownloadsPanel::stateText(row("x", DownloadState::Ok, {}, false)).contains("not verified"));
    CHECK(DownloadsPanel::stateText(row("x", DownloadState::Ok)) == "done, verified");
    CHECK(DownloadsPanel::stateText(row("x", DownloadState::Present)).startsWith("already here"));
    CHECK(DownloadsPanel::stateText(row("x", DownloadState::Waiting, "the server answered 503")) ==
          "retrying soon (the server answered 503)");
    CHECK(DownloadsPanel::stateText(row("x", DownloadState::Stopped)) == "stopped");
    CHECK(DownloadsPanel::stateText(row("x", DownloadState::Checking)).startsWith("checking"));
    // A reason that looks like a state or a cap is shown as it is: nothing is parsed out of it.
    DownloadEntry odd = row("x", DownloadState::Failed, "capped 5 B/s: ok");
    CHECK(DownloadsPanel::stateText(odd) == "failed: capped 5 B/s: ok");
    CHECK(DownloadsPanel::stateToolTip(odd) == "failed: capped 5 B/s: ok");
    odd.retryInSeconds = 59;
    CHECK(DownloadsPanel::stateToolTip(odd).endsWith("tries again in 59 s"));
}

TEST_CASE("without nicerd the window shows no downloads", "[tray][downloads]") {
    DaemonProxy daemon(nicer::tray::test::deadBus(QStringLiteral("nicer-dead-bus-downloads")));
    nicer::tray::MainWindow window(daemon, false);
    window.show();
    daemon.start(false);
    CHECK_FALSE(window.downloads()->isVisible());
}
