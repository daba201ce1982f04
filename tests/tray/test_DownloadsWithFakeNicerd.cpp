// The downloads panel against nicerd's own D-Bus service over a fake nicerd (tray/TrayOnFakeNicerd.h): the
// tray reads nicerd's properties once when nicerd appears, then follows its PropertiesChanged alone.
#include "tray/DownloadsPanel.h"
#include "tray/TrayOnFakeNicerd.h"

#include <QProgressBar>
#include <QTableWidget>
#include <QTest>
#include <catch2/catch.hpp>

using nicer::api::DownloadEntry;
using nicer::api::DownloadState;
using nicer::dbus::test::FakeDaemon;
using nicer::tray::test::kFakeNicerdWaitMs;
using nicer::tray::test::TrayOnFakeNicerd;

namespace {

DownloadEntry entry(const char* name, DownloadState state, std::uint64_t done) {
    DownloadEntry e;
    e.name = name;
    e.state = state;
    e.bytesDone = done;
    e.bytesTotal = 1048576;
    return e;
}

int progress(QTableWidget* table, int row) {
    return qobject_cast<QProgressBar*>(table->cellWidget(row, 1))->value();
}

/// One of nicerd's periods: its Sample signal, and PropertiesChanged for what changed since the last.
void period(TrayOnFakeNicerd& tray) {
    tray.service->run([](auto& service) {
        service.onSample(nicer::api::Sample{7, 0.5, 0.2, 0.3, 0.1, 0.3, 2.0, 0, false, true, 64.0, "game"});
    });
}

} // namespace

TEST_CASE("the downloads panel follows nicerd's PropertiesChanged, with one GetAll per appearance",
          "[tray][downloads]") {
    TrayOnFakeNicerd tray(QStringLiteral("nicer-downloads-tray"), [](FakeDaemon& fake) {
        fake.state_.downloads = {entry("units/a.bin", DownloadState::Downloading, 0)};
        fake.state_.bandwidthMode = "nice";
    });
    QTableWidget* table = tray.window.downloads()->table();
    REQUIRE(tray.window.downloads()->isVisible());
    REQUIRE(table->rowCount() == 1);
    CHECK(progress(table, 0) == 0);
    CHECK(tray.service->getAllCalls() == 1);

    // The file moves and a second one is queued: the panel shows it from the signal.
    tray.change([](FakeDaemon& fake) {
        fake.state_.downloads[0].bytesDone = 524288;
        fake.state_.downloads.push_back(entry("units/b.bin", DownloadState::Queued, 0));
    });
    period(tray);
    REQUIRE(QTest::qWaitFor([&] { return table->rowCount() == 2 && progress(table, 0) == 500; },
                            kFakeNicerdWaitMs));
    CHECK(table->item(1, 0)->text() == "units/b.bin");
    CHECK(table->item(1, 4)->text() == "queued");

    // Periods without a change, then the first file done: still no second read.
    period(tray);
    period(tray);
    tray.change([](FakeDaemon& fake) {
        fake.state_.downloads[0].bytesDone = 1048576;
        fake.state_.downloads[0].state = DownloadState::Ok;
        fake.state_.downloads[0].verified = true;
    });
    period(tray);
    REQUIRE(
        QTest::qWaitFor([&] { return table->item(0, 4)->text() == "done, verified"; }, kFakeNicerdWaitMs));
    CHECK(progress(table, 0) == 1000);
    CHECK(tray.window.downloads()->summaryText().contains("1 of 2 files in place"));
    CHECK(tray.service->getAllCalls() == 1);

    // nicerd restarts: without it no downloads show; the new one is read once, then listened to.
    tray.service.reset();
    REQUIRE(QTest::qWaitFor([&] { return !tray.daemon.isConnected(); }, kFakeNicerdWaitMs));
    CHECK_FALSE(tray.window.downloads()->isVisible());
    tray.service.emplace(tray.bus, tray.fake);
    REQUIRE(QTest::qWaitFor([&] { return tray.daemon.isConnected() && table->rowCount() == 2; },
                            kFakeNicerdWaitMs));
    tray.change([](FakeDaemon& fake) { fake.state_.downloads[1].state = DownloadState::Downloading; });
    period(tray);
    REQUIRE(QTest::qWaitFor([&] { return table->item(1, 4)->text() == "downloading"; }, kFakeNicerdWaitMs));
    CHECK(tray.service->getAllCalls() == 1);
}
