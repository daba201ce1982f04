// The volunteer's rules as the tray shows them, against nicerd's own D-Bus service over a fake nicerd
// (tray/TrayOnFakeNicerd.h): the window's status and the icon's tooltip say which rule holds the work and
// why, in nicerd's words (HoldReason), and the chart draws the temperature and the held spans from the
// samples. The [xvfb] case saves the screenshots for the docs (tests/harness/xvfb-tray-host.sh runs it on a
// real X server): held by the temperature, paused on battery, paused for a game. The named programs that
// pause the work are edited in the settings and reach nicerd by SetExclusivePrograms.
#include "tray/CpuChart.h"
#include "tray/ParametersPanel.h"
#include "tray/StateIcon.h"
#include "tray/TrayIcon.h"
#include "tray/TrayOnFakeNicerd.h"

#include <QDateTime>
#include <QDir>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QPainter>
#include <QPushButton>
#include <QSystemTrayIcon>
#include <QTest>
#include <QToolButton>
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using nicer::api::Sample;
using nicer::dbus::test::FakeDaemon;
using nicer::tray::TrayIcon;
using nicer::tray::TrayState;
using nicer::tray::test::kFakeNicerdWaitMs;
using nicer::tray::test::TrayOnFakeNicerd;

namespace {

/// The fake's state as a volunteer's nicerd would report it: no error, a systemd slice, nothing held.
void quiet(FakeDaemon& fake) {
    auto& s = fake.state_;
    s.lastError.clear();
    s.actuator = nicer::api::Actuator::SystemdSlice;
    s.actuatorNote.clear();
    s.workload = {"boinc", "--dir", "/var/lib/nicer/boinc"};
    s.demoWorkload = false;
    s.instances = 1;
    s.workloadPreset = "boinc";
    s.workloadPresets.at(1).available = true;
    s.temperatureSensor = "coretemp Package id 0 (/sys/class/hwmon/hwmon3/temp1_input)";
    s.powerSource = "UPower";
}

QString labelText(const QWidget& window, const QString& accessibleName) {
    for (const QLabel* label : window.findChildren<QLabel*>()) {
        if (label->accessibleName() == accessibleName && label->isVisibleTo(&window)) {
            return label->text();
        }
    }
    return {};
}

/// The value's label named @p name in the rows beside the chart (a row's field, or a line of its own).
const QLabel* valueLabel(const QWidget& window, const QString& name) {
    for (auto* form : window.findChildren<QFormLayout*>()) {
        for (int row = 0; row < form->rowCount(); ++row) {
            for (const auto role : {QFormLayout::FieldRole, QFormLayout::SpanningRole}) {
                QLayoutItem* field = form->itemAt(row, role);
                auto* label = field != nullptr ? qobject_cast<QLabel*>(field->widget()) : nullptr;
                if (label != nullptr && label->accessibleName() == name) {
                    return label;
                }
            }
        }
    }
    return nullptr;
}

/// The value beside the name @p name in the status panel (its field, not the name's label).
QString value(const QWidget& window, const QString& name) {
    const QLabel* label = valueLabel(window, name);
    return label != nullptr ? label->text() : QString();
}

/// The tooltip of that label: a value's source, or the whole text of the rules' notes.
QString tooltipOf(const QWidget& window, const QString& name) {
    const QLabel* label = valueLabel(window, name);
    return label != nullptr ? label->toolTip() : QString();
}

/// Sends @p samples as nicerd's Sample signals and waits until the last has arrived.
void send(TrayOnFakeNicerd& tray, const std::vector<Sample>& samples) {
    tray.service->run([&](auto& service) {
        for (const Sample& s : samples) {
            service.onSample(s);
        }
    });
    REQUIRE(QTest::qWaitFor(
        [&] {
            return tray.daemon.lastSample() && tray.daemon.lastSample()->timeUSec == samples.back().timeUSec;
        },
        kFakeNicerdWaitMs));
}

Sample sample(std::uint64_t timeUSec, double foreground, double quota, double celsius, const char* heldBy) {
    Sample s;
    s.timeUSec = timeUSec;
    s.foreground = foreground;
    s.quota = quota;
    s.background = std::max(0.0, std::min(quota - 0.02, 0.97 - foreground));
    s.idle = 1.0 - foreground - s.background;
    s.outside = 0.03;
    s.temperature = celsius;
    s.heldBy = heldBy;
    return s;
}

} // namespace

TEST_CASE("the status and the tooltip say which rule holds the work and why, in nicerd's words",
          "[tray][rules]") {
    TrayOnFakeNicerd tray(QStringLiteral("nicer-rules-tray"), [](FakeDaemon& fake) {
        quiet(fake);
        fake.state_.gameNote = "GameMode does not answer on the session bus: games cannot pause the work";
    });
    TrayIcon icon(tray.daemon, tray.window);
    const std::uint64_t t0 = 1'700'000'000'000'000;

    // On battery: the rule paused the work.
    tray.change([](FakeDaemon& fake) {
        fake.state_.heldBy = "battery";
        fake.state_.holdReason = "paused: on battery, 54%";
        fake.state_.onBattery = true;
        fake.state_.batteryPercent = 54;
    });
    send(tray, {sample(t0, 0.1, 0.9, 64.0, ""), sample(t0 + 1'000'000, 0.1, 0.0, 63.5, "battery")});
    REQUIRE(QTest::qWaitFor([&] { return icon.state() == TrayState::RulePaused; }, kFakeNicerdWaitMs));
    REQUIRE(
        QTest::qWaitFor([&] { return labelText(tray.window, "State").contains("Paused: on battery, 54%"); },
                        kFakeNicerdWaitMs));
    CHECK(icon.icon()->toolTip().startsWith("nicer: Paused: on battery, 54%\n"));
    CHECK(icon.icon()->toolTip().contains("Your programs"));
    CHECK(value(tray.window, "Power") == "on battery, 54 %");
    CHECK(value(tray.window, "CPU temperature") == "64 \u00b0C");
    CHECK(labelText(tray.window, "Fans").isEmpty()); // no fan reports, no target: no row
    // The note where the volunteer looks for it, not in the error bar.
    CHECK(labelText(tray.window, "Notes on your rules") == "GameMode does not answer on the session bus");
    CHECK(tooltipOf(tray.window, "Notes on your rules").endsWith("games cannot pause the work"));
    CHECK(tray.window.errorText().isEmpty());
    REQUIRE(tray.window.chart()->spans().size() == 1);
    CHECK(tray.window.chart()->spans().front().rule == "battery");

    // Back on mains and hot: the temperature rule holds the work to 40%.
    tray.change([](FakeDaemon& fake) {
        fake.state_.heldBy = "temperature";
        fake.state_.holdReason = "held to 40%: CPU 82 \u00b0C, target 80 \u00b0C";
        fake.state_.onBattery = false;
        fake.state_.temperatureTargetInUse = 80;
    });
    send(tray, {sample(t0 + 2'000'000, 0.1, 0.4, 82.0, "temperature")});
    REQUIRE(QTest::qWaitFor([&] { return icon.state() == TrayState::Held; }, kFakeNicerdWaitMs));
    REQUIRE(QTest::qWaitFor(
        [&] {
            return icon.icon()->toolTip().startsWith("nicer: Held to 40%: CPU 82 \u00b0C, target 80 \u00b0C");
        },
        kFakeNicerdWaitMs));
    CHECK(labelText(tray.window, "State").contains("Held to 40%: CPU 82 \u00b0C, target 80 \u00b0C"));
    CHECK(value(tray.window, "CPU temperature") == "82 \u00b0C, target 80 \u00b0C");
    CHECK(value(tray.window, "Power") == "on mains");

    // The fans, over their target: the fan rule holds the work.
    tray.change([](FakeDaemon& fake) {
        fake.state_.heldBy = "fan";
        fake.state_.holdReason = "held to 35%: fans 3050 rpm, target 3000 rpm";
        fake.state_.fanSpeed = 3049.6;
        fake.state_.params.fanTarget = 3000;
    });
    send(tray, {sample(t0 + 2'500'000, 0.1, 0.35, 79.0, "fan")});
    REQUIRE(QTest::qWaitFor([&] { return labelText(tray.window, "Fans") == "3050 rpm, target 3000 rpm"; },
                            kFakeNicerdWaitMs));
    CHECK(labelText(tray.window, "State").contains("Held to 35%: fans 3050 rpm, target 3000 rpm"));

    // No rule holds any more: the words go with it.
    tray.change([](FakeDaemon& fake) {
        fake.state_.heldBy.clear();
        fake.state_.holdReason.clear();
    });
    send(tray, {sample(t0 + 3'000'000, 0.1, 0.9, 78.0, "")});
    REQUIRE(QTest::qWaitFor([&] { return icon.state() == TrayState::Running; }, kFakeNicerdWaitMs));
    CHECK_FALSE(labelText(tray.window, "State").contains("Held"));
    CHECK_FALSE(icon.icon()->toolTip().contains("Held"));

    // The sensor can no longer be read: the row says so, its tooltip says why, and the notes' line does not
    // repeat it.
    tray.change([](FakeDaemon& fake) {
        fake.state_.sensorNote =
            "cannot read /sys/class/hwmon/hwmon3/temp1_input: the temperature rule waits "
            "until it can be read";
    });
    send(tray, {sample(t0 + 4'000'000, 0.1, 0.9, nicer::api::kNoTemperature, "")});
    // The sample and the note's PropertiesChanged come apart: both awaited.
    REQUIRE(QTest::qWaitFor(
        [&] {
            return value(tray.window, "CPU temperature") == "not read" &&
                   tooltipOf(tray.window, "CPU temperature").endsWith("waits until it can be read");
        },
        kFakeNicerdWaitMs));
    CHECK(labelText(tray.window, "Notes on your rules") == "GameMode does not answer on the session bus");
}

TEST_CASE("the named programs: edited in the settings, sent to nicerd, shown as nicerd announces them",
          "[tray][rules]") {
    TrayOnFakeNicerd tray(QStringLiteral("nicer-rules-programs"), [](FakeDaemon& fake) {
        quiet(fake);
        fake.state_.exclusivePrograms = {"blender"};
        fake.state_.programsRunning = {"blender"};
    });
    nicer::tray::ParametersPanel& panel = *tray.window.parameters();
    QLineEdit& field = *panel.programsEdit();
    const auto programs = [&] {
        std::lock_guard lock(tray.fake.mutex);
        return tray.fake.state_.exclusivePrograms;
    };
    // What nicerd has, from GetAll.
    CHECK(field.text() == "blender");
    CHECK(panel.programsRunningLabel()->isVisibleTo(&tray.window));
    CHECK(panel.programsRunningLabel()->text() == "Running now: blender");
    CHECK_FALSE(panel.applyButton()->isEnabled());

    // Typed apart by a comma and applied: nicerd gets the list, and announces it, which the field shows with
    // spaces.
    const nicer::control::ControllerParams before = tray.daemon.properties().state.params;
    field.clear();
    QTest::keyClicks(&field, "blender,steam");
    REQUIRE(panel.applyButton()->isEnabled());
    QTest::mouseClick(panel.applyButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor(
        [&] {
            return programs() == std::vector<std::string>{"blender", "steam"};
        },
        kFakeNicerdWaitMs));
    REQUIRE(QTest::qWaitFor([&] { return field.text() == "blender steam"; }, kFakeNicerdWaitMs));
    CHECK(tray.daemon.properties().state.exclusivePrograms == std::vector<std::string>{"blender", "steam"});
    CHECK_FALSE(panel.hasPendingEdits());
    CHECK(tray.window.errorText().isEmpty());
    CHECK(tray.daemon.properties().state.params == before);

    // Changed on nicerd's side (nicer exclusive-programs, another tray): PropertiesChanged brings it.
    tray.change([](FakeDaemon& fake) {
        fake.state_.exclusivePrograms = {"gimp", "krita"};
        fake.state_.programsRunning = {"krita"};
    });
    tray.service->run([](auto& service) { service.announceChanges(); });
    REQUIRE(QTest::qWaitFor([&] { return field.text() == "gimp krita"; }, kFakeNicerdWaitMs));
    REQUIRE(QTest::qWaitFor([&] { return panel.programsRunningLabel()->text() == "Running now: krita"; },
                            kFakeNicerdWaitMs));
    tray.change([](FakeDaemon& fake) { fake.state_.programsRunning.clear(); });
    tray.service->run([](auto& service) { service.announceChanges(); });
    REQUIRE(QTest::qWaitFor([&] { return !panel.programsRunningLabel()->isVisibleTo(&tray.window); },
                            kFakeNicerdWaitMs));

    // A path is no program's name: nicerd refuses (InvalidArgs) in its words, keeps its list, and the field
    // shows that list again.
    field.clear();
    QTest::keyClicks(&field, "gimp /usr/bin/blender");
    QTest::mouseClick(panel.applyButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor([&] { return !tray.window.errorText().isEmpty(); }, kFakeNicerdWaitMs));
    CHECK(tray.window.errorText().contains("Setting the programs that pause the work"));
    CHECK(tray.window.errorText().contains("'/usr/bin/blender' is a path"));
    REQUIRE(QTest::qWaitFor([&] { return field.text() == "gimp krita"; }, kFakeNicerdWaitMs));
    CHECK(programs() == std::vector<std::string>{"gimp", "krita"});
    CHECK_FALSE(panel.hasPendingEdits());

    // Any other refusal reads the same way.
    tray.change([](FakeDaemon& fake) { fake.refusal = "cannot write exclusive-programs.conf: disk full"; });
    field.clear();
    QTest::keyClicks(&field, "gimp");
    QTest::keyClick(&field, Qt::Key_Return);
    REQUIRE(
        QTest::qWaitFor([&] { return tray.window.errorText().contains("disk full"); }, kFakeNicerdWaitMs));
    REQUIRE(QTest::qWaitFor([&] { return field.text() == "gimp krita"; }, kFakeNicerdWaitMs));
    CHECK(programs() == std::vector<std::string>{"gimp", "krita"});
}

namespace {

enum class Scene { Temperature, Battery, Game, Profile, Schedule, Memory, Snooze };

/// Five minutes of samples ending now: the work runs on the spare CPU, then @p scene holds it.
std::vector<Sample> history(Scene scene, std::uint64_t nowUSec) {
    std::vector<Sample> samples;
    constexpr int kCount = 300;
    double celsius = 58.0;
    for (int i = 0; i < kCount; ++i) {
        const std::uint64_t t = nowUSec - 1'000'000ull * static_cast<std::uint64_t>(kCount - 1 - i);
        const double yours = 0.08 + 0.05 * std::sin(i / 7.0) + (i % 23 == 0 ? 0.15 : 0.0);
        Sample s = sample(t, yours, 0.9, 0.0, "");
        switch (scene) {
        case Scene::Temperature: // it heats up under the work; past 80 °C the rule holds the work down
            celsius = i < 120 ? 58.0 + 26.0 * (1.0 - std::exp(-i / 40.0))
                              : 80.2 + 2.5 * std::exp(-(i - 120) / 25.0) + 0.3 * std::sin(i / 5.0);
            if (i >= 120) {
                s = sample(t, yours, 0.90 - 0.45 * (1.0 - std::exp(-(i - 120) / 15.0)), 0.0, "temperature");
            }
            break;
        case Scene::Battery: // unplugged at 54%: the work pauses and the CPU cools
            celsius = i < 180 ? 70.0 + 1.5 * std::sin(i / 9.0) : 48.0 + 22.0 * std::exp(-(i - 180) / 30.0);
            if (i >= 180) {
                s = sample(t, yours, 0.0, 0.0, "battery");
            }
            break;
        case Scene::Game: // the volunteer paused for a while, later a game starts and the rule pauses the
                          // work
            celsius = i < 200 ? 70.0 + 1.5 * std::sin(i / 9.0) : 76.0 + 2.0 * std::sin(i / 6.0);
            if (i >= 60 && i < 100) {
                s = sample(t, yours, 0.0, 0.0, "");
                s.paused = true;
                celsius = 52.0;
            } else if (i >= 200) {
                s = sample(t, 0.62 + 0.08 * std::sin(i / 4.0), 0.0, 0.0, "game");
            }
            break;
        case Scene::Profile: // away with the whole machine to the work; back at the desk, the here profile's
                             // largest share, 40%, holds it
            celsius = i < 150 ? 76.0 + 1.5 * std::sin(i / 9.0) : 62.0 + 14.0 * std::exp(-(i - 150) / 30.0);
            s.presence = i < 150 ? nicer::control::Presence::Away : nicer::control::Presence::Here;
            if (i >= 150) {
                s = sample(t, yours, 0.40, 0.0, "profile");
                s.presence = nicer::control::Presence::Here;
            }
            break;
        case Scene::Schedule: // at 09:00 the computing hours end (mon-fri 18:00-09:00): the work pauses
            celsius = i < 240 ? 72.0 + 1.5 * std::sin(i / 9.0) : 50.0 + 22.0 * std::exp(-(i - 240) / 30.0);
            if (i >= 240) {
                s = sample(t, yours, 0.0, 0.0, "schedule");
            }
            break;
        case Scene::Memory: // the volunteer opens a large program: the memory rule freezes the work
            celsius = i < 210 ? 71.0 + 1.5 * std::sin(i / 9.0) : 52.0 + 19.0 * std::exp(-(i - 210) / 30.0);
            if (i >= 210) {
                s = sample(t, yours, 0.0, 0.0, "memory");
            }
            break;
        case Scene::Snooze: // the volunteer snoozed it for an hour, eight minutes ago
            celsius = i < 180 ? 71.0 + 1.5 * std::sin(i / 9.0) : 49.0 + 22.0 * std::exp(-(i - 180) / 30.0);
            if (i >= 180) {
                s = sample(t, yours, 0.0, 0.0, "");
                s.paused = true;
            }
            break;
        }
        s.temperature = celsius;
        samples.push_back(s);
    }
    return samples;
}

/// The state beside @p last, the scene's last sample.
void stage(FakeDaemon& fake, Scene scene, const Sample& last) {
    auto& s = fake.state_;
    s.temperatureTargetInUse =
        scene == Scene::Profile ? 70 : 80; // the chosen target, 10 °C cooler while here
    s.onBattery = scene == Scene::Battery;
    s.batteryPercent = scene == Scene::Battery ? 54 : 100;
    s.games = scene == Scene::Game ? 1 : 0;
    // The named programs in the settings; the game's launcher is one of them and runs with it.
    s.exclusivePrograms = {"blender", "steam"};
    s.programsRunning = scene == Scene::Game ? std::vector<std::string>{"steam"} : std::vector<std::string>{};
    switch (scene) {
    case Scene::Temperature:
        s.heldBy = "temperature";
        s.holdReason = "held to " + std::to_string(std::lround(100 * last.quota)) + "%: CPU " +
                       std::to_string(std::lround(last.temperature)) + " \u00b0C, target 80 \u00b0C";
        break;
    case Scene::Battery:
        s.heldBy = "battery";
        s.holdReason = "paused: on battery, 54%";
        break;
    case Scene::Game:
        s.heldBy = "game";
        s.holdReason = "paused: a game is running";
        break;
    case Scene::Profile:
        s.heldBy = "profile";
        s.holdReason = "held to 40%: at most 40% while you're here";
        s.params.maxShare = 0.4;
        break;
    case Scene::Schedule:
        s.heldBy = "schedule";
        s.holdReason = "paused: outside your computing hours (mon-fri 18:00-09:00), which begin in 9 h";
        s.params.computeHours = *nicer::control::WeeklyHours::parse("mon-fri 18:00-09:00");
        break;
    case Scene::Memory:
        s.heldBy = "memory";
        s.holdReason =
            "paused: programs beside the work waited on memory 4.2% of the time: 1 instance stopped to "
            "free its memory (no swap to take it), the work frozen, its memory held to 1.2 GiB";
        s.memoryHold = "stopped";
        s.memoryHoldReason = s.holdReason.substr(8);
        s.memoryStallBeside = 0.042;
        s.memoryStallWhere = "/user.slice/user-1000.slice/user@1000.service/app.slice";
        s.workMemory = 1800ull << 20;
        s.memoryHoldLimit = 1229ull << 20;
        s.instances = 2;
        s.instancesStopped = 1;
        break;
    case Scene::Snooze:
        s.heldBy.clear();
        s.holdReason.clear();
        s.paused = true;
        s.pausedUntilUSec = last.timeUSec + 52ull * 60 * 1'000'000;
        break;
    }
    s.presence = scene == Scene::Profile ? nicer::control::Presence::Here : nicer::control::Presence::Away;
    s.presenceSource = "GNOME Shell's idle monitor";
    s.presenceReason = scene == Scene::Profile ? "input within 3 min" : "no input for 3 min";
}

} // namespace

TEST_CASE("the window held by the temperature, paused on battery, paused for a game, held by the profile "
          "for while you're here, paused outside the computing hours, and paused by the memory rule "
          "(screenshots)",
          "[xvfb][rules]") {
    TrayOnFakeNicerd tray(QStringLiteral("nicer-rules-screenshot"), quiet);
    TrayIcon icon(tray.daemon, tray.window);
    QDir().mkpath(NICER_SCREENSHOT_DIR);
    const std::uint64_t now = static_cast<std::uint64_t>(QDateTime::currentMSecsSinceEpoch()) * 1000;
    const std::pair<Scene, const char*> scenes[] = {
        {Scene::Temperature, "temperature"}, {Scene::Battery, "battery"},   {Scene::Game, "game"},
        {Scene::Profile, "profile"},         {Scene::Schedule, "schedule"}, {Scene::Memory, "memory"}};
    std::uint64_t end = now;
    for (const auto& entry : scenes) {
        const Scene scene = entry.first; // no structured binding: the lambdas below capture these
        const char* name = entry.second;
        INFO(name);
        const auto samples = history(scene, end);
        tray.change([&](FakeDaemon& fake) { stage(fake, scene, samples.back()); });
        send(tray, samples);
        REQUIRE(QTest::qWaitFor([&] { return !tray.daemon.view().holdReason.isEmpty(); }, kFakeNicerdWaitMs));
        REQUIRE(QTest::qWaitFor(
            [&] {
                return labelText(tray.window, "State").contains(tray.daemon.view().holdReason.mid(1)) &&
                       tray.daemon.properties().state.heldBy == name;
            },
            kFakeNicerdWaitMs));
        const bool held = scene == Scene::Temperature || scene == Scene::Profile;
        CHECK(icon.state() == (held ? TrayState::Held : TrayState::RulePaused));
        CHECK(labelText(tray.window, "You").startsWith(scene == Scene::Profile ? "here (" : "away ("));
        CHECK_FALSE(tray.window.chart()->spans().empty());
        if (scene == Scene::Memory) {
            const QString expected = "work 1.8 GiB, others waited 4.2 %, held to 1.2 GiB, 1 stopped";
            const bool shown = QTest::qWaitFor([&] { return labelText(tray.window, "Memory") == expected; },
                                               kFakeNicerdWaitMs);
            INFO(labelText(tray.window, "Memory").toStdString());
            CHECK(shown);
        }
        REQUIRE(QTest::qWaitForWindowExposed(&tray.window));
        QTest::qWait(200);
        const QString path = QStringLiteral(NICER_SCREENSHOT_DIR "/nicer-tray-rules-%1.png").arg(name);
        INFO(path.toStdString());
        CHECK(tray.window.grab().save(path));
        end += 3600ull * 1'000'000; // the next scene's history starts over, an hour later
    }
    // The tray's icons for the two states, beside the others, for the docs.
    const TrayState states[] = {TrayState::Running, TrayState::Throttled, TrayState::Held, TrayState::Paused,
                                TrayState::RulePaused};
    QPixmap strip(48 * 5 + 8 * 4, 48);
    strip.fill(Qt::transparent);
    QPainter painter(&strip);
    for (int i = 0; i < 5; ++i) {
        painter.drawPixmap(56 * i, 0, nicer::tray::stateIcon(states[i]).pixmap(48));
    }
    painter.end();
    CHECK(strip.save(NICER_SCREENSHOT_DIR "/nicer-tray-icons.png"));
}

TEST_CASE("the window snoozed for an hour: the status says until when (screenshot)", "[xvfb][rules]") {
    TrayOnFakeNicerd tray(QStringLiteral("nicer-snooze-screenshot"), quiet);
    TrayIcon icon(tray.daemon, tray.window);
    QDir().mkpath(NICER_SCREENSHOT_DIR);
    const std::uint64_t now = static_cast<std::uint64_t>(QDateTime::currentMSecsSinceEpoch()) * 1000;
    const auto samples = history(Scene::Snooze, now);
    tray.change([&](FakeDaemon& fake) { stage(fake, Scene::Snooze, samples.back()); });
    send(tray, samples);
    REQUIRE(QTest::qWaitFor([&] { return tray.window.statusText().startsWith("Paused until "); },
                            kFakeNicerdWaitMs));
    CHECK(tray.window.statusText().endsWith("(52 min left)"));
    CHECK(icon.state() == TrayState::Paused);
    CHECK(tray.window.pauseButton()->isChecked());
    CHECK(tray.window.pauseButton()->text() == "Resume");
    REQUIRE(QTest::qWaitForWindowExposed(&tray.window));
    QTest::qWait(200);
    CHECK(tray.window.grab().save(NICER_SCREENSHOT_DIR "/nicer-tray-snooze.png"));
}
