// The tray against a REAL nicerd on the private session bus: the tray starts nicerd through its systemd
// user unit (installed for this build by tests/harness/runtime-unit.sh), and every check reads nicerd's
// state back through the core's own D-Bus client, not through the tray.
#include "dbus/client/DaemonClient.h"
#include "integration/H2Manifest.h"
#include "tray/CpuChart.h"
#include "tray/DaemonProxy.h"
#include "tray/DownloadsPanel.h"
#include "tray/MainWindow.h"
#include "tray/ParametersPanel.h"
#include "tray/SnoozeMenu.h"
#include "tray/TrayIcon.h"

#include <QComboBox>
#include <QDBusConnection>
#include <QDir>
#include <QDoubleSpinBox>
#include <QGuiApplication>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QSignalSpy>
#include <QSlider>
#include <QSystemTrayIcon>
#include <QTableWidget>
#include <QTest>
#include <QToolButton>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

using nicer::tray::DaemonProxy;
using nicer::tray::MainWindow;

namespace {

constexpr int kWaitMs = 60'000; // a bound on waiting for nicerd, never a performance claim

void runChecked(const QString& program, const QStringList& args, const QProcessEnvironment& env = {}) {
    QProcess p;
    if (!env.isEmpty()) {
        p.setProcessEnvironment(env);
    }
    p.start(program, args);
    REQUIRE(p.waitForFinished(kWaitMs));
    INFO(program.toStdString() << ": " << p.readAllStandardError().toStdString());
    REQUIRE(p.exitCode() == 0);
}

/// nicerd.service of this build in the user manager's runtime units, with its state in a fresh directory and
/// a PATH of its own; stopped and removed at the end.
class RuntimeUnit {
public:
    explicit RuntimeUnit(const QStringList& nicerdArgs = {}) {
        m_state = std::filesystem::temp_directory_path() / ("nicer-tray-test-" + std::to_string(::getpid()));
        std::filesystem::remove_all(m_state);
        // nicerd finds only md5sum (the demo): no host's BOINC or Folding@home client changes what it offers.
        const auto bin = m_state / "bin-demo-only";
        std::filesystem::create_directories(bin);
        std::filesystem::create_symlink("/usr/bin/md5sum", bin / "md5sum");
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert("NICER_STATE_DIR", QString::fromStdString(m_state.string()));
        env.insert("NICER_UNIT_PATH", QString::fromStdString(bin.string()));
        runChecked(NICER_RUNTIME_UNIT,
                   QStringList{"install", NICER_BUILD_DIR, "--period", "0.25"} + nicerdArgs, env);
    }
    ~RuntimeUnit() {
        QProcess::execute(NICER_RUNTIME_UNIT, {"remove"});
        std::filesystem::remove_all(m_state);
    }
    RuntimeUnit(const RuntimeUnit&) = delete;
    RuntimeUnit& operator=(const RuntimeUnit&) = delete;

private:
    std::filesystem::path m_state;
};

/// The tray's window against a real nicerd that it starts through the runtime unit, shown and connecting.
struct TrayOnNicerd {
    explicit TrayOnNicerd(const QStringList& nicerdArgs = {})
        : unit(nicerdArgs)
        , daemon(QDBusConnection::sessionBus())
        , window(daemon, false) {
        window.show();
        daemon.start(true);
    }

    RuntimeUnit unit;
    DaemonProxy daemon;
    MainWindow window;
};

nicer::api::DaemonState statusOfNicerd() {
    auto client = nicer::dbus::DaemonClient::connect();
    REQUIRE(client);
    auto status = client->status();
    INFO((status ? "" : status.error().message));
    REQUIRE(status);
    return *status;
}

/// Waits until the window has drawn at least @p count more samples than now.
void waitForSamples(MainWindow& window, std::size_t count) {
    const std::size_t target = window.history().points().size() + count;
    REQUIRE(QTest::qWaitFor([&] { return window.history().points().size() >= target; }, kWaitMs));
}

struct Means {
    double foreground = 0, background = 0, reserve = 0;
};

/// Means over the last @p n points the chart draws.
Means lastPoints(const MainWindow& window, std::size_t n) {
    const auto& points = window.history().points();
    REQUIRE(points.size() >= n);
    Means m;
    for (auto it = points.end() - static_cast<std::ptrdiff_t>(n); it != points.end(); ++it) {
        m.foreground += it->sample.foreground / static_cast<double>(n);
        m.background += it->sample.background / static_cast<double>(n);
        m.reserve += it->reserveKept() / static_cast<double>(n);
    }
    return m;
}

} // namespace

TEST_CASE("the tray starts nicerd through its user unit and the chart receives live points", "[tray]") {
    TrayOnNicerd tray;
    DaemonProxy& daemon = tray.daemon;
    MainWindow& window = tray.window;
    REQUIRE(QTest::qWaitFor([&] { return daemon.isConnected(); }, kWaitMs));
    waitForSamples(window, 8);
    CHECK(window.chart()->pointCount() == static_cast<qsizetype>(window.history().points().size()));
    CHECK(window.errorText().isEmpty());
    CHECK(window.noticeText().isEmpty());
    CHECK(daemon.properties().state.cpuCount > 0);
    CHECK(daemon.properties().state.demoWorkload);
    CHECK(statusOfNicerd().params.period == std::chrono::milliseconds(250));
}

TEST_CASE("moving a slider and applying changes a real nicerd's parameters", "[tray]") {
    TrayOnNicerd tray;
    DaemonProxy& daemon = tray.daemon;
    MainWindow& window = tray.window;
    REQUIRE(QTest::qWaitFor([&] { return daemon.isConnected() && daemon.properties().state.cpuCount > 0; },
                            kWaitMs));

    auto* panel = window.parameters();
    QSlider* band = panel->slider("reserve-band");
    band->setValue(band->value() + band->maximum() / 10);
    const double wanted = panel->spinBox("reserve-band")->value() / 100;
    panel->spinBox("max-multiplier")->setValue(8);
    QSignalSpy applied(&daemon, &DaemonProxy::parametersApplied);
    QTest::mouseClick(panel->applyButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor([&] { return applied.count() == 1; }, kWaitMs));

    const auto status = statusOfNicerd();
    CHECK(status.params.reserveBand == Approx(wanted));
    CHECK(status.params.maxMultiplier == Approx(8));
    CHECK(status.params.period == std::chrono::milliseconds(250)); // untouched values are sent unchanged
    REQUIRE(QTest::qWaitFor([&] { return !panel->hasPendingEdits(); }, kWaitMs));

    QSignalSpy reset(&daemon, &DaemonProxy::parametersApplied);
    QTest::mouseClick(panel->resetButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor([&] { return reset.count() == 1; }, kWaitMs));
    CHECK(statusOfNicerd().params == nicer::control::ControllerParams{});
}

TEST_CASE("the pause toggle pauses and resumes a real nicerd", "[tray]") {
    TrayOnNicerd tray;
    DaemonProxy& daemon = tray.daemon;
    MainWindow& window = tray.window;
    REQUIRE(
        QTest::qWaitFor([&] { return daemon.isConnected() && window.pauseButton()->isEnabled(); }, kWaitMs));

    QTest::mouseClick(window.pauseButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor([&] { return daemon.properties().state.paused; }, kWaitMs));
    CHECK(statusOfNicerd().paused);
    CHECK(window.pauseButton()->isChecked());
    waitForSamples(window, 2);
    CHECK(window.history().points().back().sample.paused);

    QTest::mouseClick(window.pauseButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor([&] { return !daemon.properties().state.paused; }, kWaitMs));
    CHECK_FALSE(statusOfNicerd().paused);
    CHECK_FALSE(window.pauseButton()->isChecked());
}

TEST_CASE("the snooze menu pauses a real nicerd for an hour, and the window says until when", "[tray]") {
    TrayOnNicerd tray;
    DaemonProxy& daemon = tray.daemon;
    MainWindow& window = tray.window;
    REQUIRE(
        QTest::qWaitFor([&] { return daemon.isConnected() && window.pauseButton()->isEnabled(); }, kWaitMs));
    auto* snooze = qobject_cast<nicer::tray::SnoozeMenu*>(window.pauseButton()->menu());
    REQUIRE(snooze != nullptr);
    const auto asked = std::chrono::system_clock::now();
    snooze->forAnHour()->trigger();
    REQUIRE(QTest::qWaitFor([&] { return daemon.properties().state.pausedUntilUSec != 0; }, kWaitMs));
    const auto status = statusOfNicerd();
    CHECK(status.paused);
    const auto end = std::chrono::system_clock::time_point(std::chrono::microseconds(status.pausedUntilUSec));
    CHECK(end >= asked + std::chrono::hours(1));
    CHECK(end <= std::chrono::system_clock::now() + std::chrono::hours(1));
    CHECK(window.pauseButton()->isChecked());
    REQUIRE(QTest::qWaitFor([&] { return window.statusText().startsWith("Paused until "); }, kWaitMs));
    CHECK(window.statusText().endsWith("(1 h left)"));

    // The button resumes it, as it resumes a pause without an end.
    QTest::mouseClick(window.pauseButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor([&] { return !daemon.properties().state.paused; }, kWaitMs));
    CHECK(statusOfNicerd().pausedUntilUSec == 0);
}

TEST_CASE("the workload presets come from nicerd, and a missing program is explained", "[tray]") {
    TrayOnNicerd tray;
    DaemonProxy& daemon = tray.daemon;
    MainWindow& window = tray.window;
    REQUIRE(
        QTest::qWaitFor([&] { return daemon.isConnected() && window.presetBox()->count() > 0; }, kWaitMs));

    QComboBox* presets = window.presetBox();
    CHECK(presets->currentData().toString() == "demo");
    const int boinc = presets->findData("boinc");
    REQUIRE(boinc >= 0);
    // nicerd's PATH has no boinc (RuntimeUnit), whether or not this machine has one.
    CHECK(presets->itemText(boinc).contains("not installed"));
    QSignalSpy errors(&daemon, &DaemonProxy::errorOccurred);
    presets->setCurrentIndex(boinc);
    emit presets->activated(boinc);
    REQUIRE(QTest::qWaitFor([&] { return errors.count() >= 1; }, kWaitMs));
    CHECK(window.errorText().contains("boinc-client"));
    CHECK(statusOfNicerd().workloadPreset == "demo");
    REQUIRE(QTest::qWaitFor([&] { return presets->currentData().toString() == "demo"; }, kWaitMs));
}

TEST_CASE("under a duty cycle the window says why the work is held back in bursts", "[tray]") {
    TrayOnNicerd tray({"--actuator", "signal-duty-cycle"});
    DaemonProxy& daemon = tray.daemon;
    MainWindow& window = tray.window;
    // The state's default is the slice's quota: the wait ends once the property has been read.
    REQUIRE(QTest::qWaitFor(
        [&] { return daemon.properties().state.actuator == nicer::api::Actuator::SignalDutyCycle; },
        kWaitMs));
    // Chosen here with --actuator (these machines delegate cpu); the note says so and what auto gives.
    CHECK(window.noticeText().contains("chose signal-duty-cycle"));
    CHECK(window.noticeText().contains("cpu controller"));
    CHECK(window.errorText().isEmpty());
}

TEST_CASE("the tray reconnects when nicerd restarts", "[tray]") {
    TrayOnNicerd tray;
    DaemonProxy& daemon = tray.daemon;
    MainWindow& window = tray.window;
    REQUIRE(QTest::qWaitFor([&] { return daemon.isConnected(); }, kWaitMs));
    waitForSamples(window, 2);

    QSignalSpy connection(&daemon, &DaemonProxy::connectedChanged);
    QSignalSpy history(&daemon, &DaemonProxy::historyReceived);
    runChecked("systemctl", {"--user", "restart", "nicerd.service"});
    REQUIRE(QTest::qWaitFor([&] { return connection.count() >= 2 && daemon.isConnected(); }, kWaitMs));
    CHECK(connection.first().at(0).toBool() == false);
    CHECK(connection.last().at(0).toBool() == true);
    REQUIRE(QTest::qWaitFor([&] { return history.count() >= 1; }, kWaitMs));
    waitForSamples(window, 2);
}

TEST_CASE("the downloads panel shows nicerd's work units arrive, from its PropertiesChanged alone",
          "[tray][downloads]") {
    const auto servers = nicer::test::H2Servers::load();
    const auto dir = std::filesystem::temp_directory_path() / ("nicer-tray-dl-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto tls = nicer::test::nghttpdTlsBase(servers);
    const std::vector<nicer::test::ManifestEntry> files{nicer::test::servedFile(servers, "1k.bin", tls),
                                                        nicer::test::servedFile(servers, "1m.bin", tls),
                                                        nicer::test::servedFile(servers, "16m.bin", tls)};
    nicer::test::writeMetalink(dir / "units.meta4", files);
    TrayOnNicerd tray({"--manifest", QString::fromStdString((dir / "units.meta4").string()), "--download-dir",
                       QString::fromStdString((dir / "units").string()), "--ca-file",
                       QString::fromStdString(servers.caFile.string())});
    DaemonProxy& daemon = tray.daemon;
    MainWindow& window = tray.window;
    REQUIRE(
        QTest::qWaitFor([&] { return daemon.isConnected() && window.downloads()->isVisible(); }, kWaitMs));

    QTableWidget* table = window.downloads()->table();
    REQUIRE(table->rowCount() == 3);
    const auto allDone = [&] {
        for (int row = 0; row < table->rowCount(); ++row) {
            if (table->item(row, 4)->text() != "done, verified") {
                return false;
            }
        }
        return true;
    };
    // Refreshed by nicerd's PropertiesChanged alone: the tray reads the properties once, when nicerd appears.
    REQUIRE(QTest::qWaitFor(allDone, kWaitMs));
    for (int row = 0; row < table->rowCount(); ++row) {
        const auto& file = files[static_cast<std::size_t>(row)];
        CHECK(table->item(row, 0)->text().toStdString() == file.name);
        CHECK(qobject_cast<QProgressBar*>(table->cellWidget(row, 1))->value() == 1000);
        CHECK(std::filesystem::file_size(dir / "units" / file.name) == file.size);
    }
    CHECK(window.downloads()->summaryText().contains("3 of 3 files in place"));
    CHECK(window.downloads()->summaryText().contains("nice"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("the chart tracks a foreground CPU hog and recovers when it stops", "[xvfb]") {
    RuntimeUnit unit;
    DaemonProxy daemon(QDBusConnection::sessionBus());
    MainWindow window(daemon, false);
    const bool trayHost = QSystemTrayIcon::isSystemTrayAvailable() ||
                          QTest::qWaitFor([] { return QSystemTrayIcon::isSystemTrayAvailable(); }, 10'000);
    // Under tests/harness/xvfb-tray-host.sh there is a tray host; the icon must use it.
    INFO("QT_QPA_PLATFORM=" << qgetenv("QT_QPA_PLATFORM").toStdString());
    REQUIRE((trayHost || qgetenv("QT_QPA_PLATFORM") != "xcb"));
    nicer::tray::TrayIcon tray(daemon, window);
    if (trayHost) {
        tray.show();
    }
    window.show();
    daemon.start(true);
    REQUIRE(QTest::qWaitFor([&] { return daemon.isConnected(); }, kWaitMs));

    // Period 0.25 s: 16 samples = 4 s per phase, the last 8 (2 s) measured after the controller settles.
    waitForSamples(window, 16);
    const Means before = lastPoints(window, 8);

    QProcess hog;
    hog.start("stress-ng", {"--cpu", QString::number(QThread::idealThreadCount()), "--quiet"});
    REQUIRE(hog.waitForStarted());
    waitForSamples(window, 24);
    const Means during = lastPoints(window, 8);
    hog.terminate();
    REQUIRE(hog.waitForFinished(kWaitMs));
    waitForSamples(window, 24);
    const Means after = lastPoints(window, 8);

    INFO("foreground " << before.foreground << " -> " << during.foreground << " -> " << after.foreground);
    INFO("background " << before.background << " -> " << during.background << " -> " << after.background);
    INFO("reserve    " << before.reserve << " -> " << during.reserve << " -> " << after.reserve);
    CHECK(during.foreground > before.foreground + 0.5);
    CHECK(during.background < before.background - 0.5);
    CHECK(during.reserve > before.reserve);
    CHECK(after.foreground < during.foreground - 0.5);
    CHECK(after.background > during.background + 0.5);
    CHECK(after.reserve < during.reserve);
    CHECK(window.chart()->pointCount() == static_cast<qsizetype>(window.history().points().size()));

    if (trayHost) {
        CHECK(tray.icon()->isVisible());
        QDir().mkpath(NICER_SCREENSHOT_DIR);
        QTest::qWait(300); // let the last sample paint
        CHECK(window.grab().save(NICER_SCREENSHOT_DIR "/nicer-tray-window.png"));
        QScreen* screen = QGuiApplication::primaryScreen();
        CHECK(screen->grabWindow(0).save(NICER_SCREENSHOT_DIR "/nicer-tray-screen.png"));
    }
}
