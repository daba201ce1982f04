#include "tray/BoincModel.h"
#include "tray/BoincTestData.h"
#include "tray/LocaleGuard.h"

#include <QDateTime>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string_view>

using nicer::api::BoincStatus;
using nicer::api::BoincTask;
using nicer::tray::BoincModel;
using nicer::tray::DeadlineUrgency;
using nicer::tray::test::kAsteroids;
using nicer::tray::test::kEinstein;
using nicer::tray::test::LocaleGuard;
using nicer::tray::test::realisticBoinc;

namespace {

using nicer::tray::test::kNow;
constexpr std::int64_t kHour = 3600;
constexpr std::int64_t kDay = 24 * kHour;

/// A status in the state of @p keyword, as nicerd's property says it.
BoincStatus state(std::string_view keyword, std::string detail = {}) {
    BoincStatus s;
    s.state = nicer::api::busKeywordValue<nicer::api::BoincState>(keyword).value();
    s.detail = std::move(detail);
    return s;
}

/// A task in the state of @p keyword, as nicerd's property says it.
BoincTask task(std::string_view keyword, std::int64_t deadline) {
    BoincTask t;
    t.name = "t";
    t.state =
        nicer::valueIn<nicer::api::BoincTaskState>(nicer::api::kBoincTaskStateKeywords, keyword).value();
    t.deadline = deadline;
    return t;
}

/// A task that has run @p elapsed s by BOINC's clock (@p cpu s of CPU), which BOINC aborts at @p limit s.
BoincTask clocked(std::string_view keyword, double elapsed, double limit, double cpu = 0.0) {
    BoincTask t = task(keyword, 0);
    t.fractionDone = 0.5;
    t.elapsedSeconds = elapsed;
    t.elapsedLimitSeconds = limit;
    t.cpuSeconds = cpu;
    return t;
}

nicer::tray::BoincTaskRow rowOf(const BoincTask& t) {
    BoincStatus s = state("running");
    s.tasks = {t};
    const auto rows = BoincModel::taskRows(s, kNow);
    REQUIRE(rows.size() == 1);
    return rows[0];
}

} // namespace

TEST_CASE("BOINC's state reads as plain words, with nicerd's detail", "[tray][boinc]") {
    CHECK(BoincModel::stateText(state("running")) == "Running");
    CHECK(BoincModel::stateText(state("starting")) == QString::fromUtf8("Starting\u2026"));
    CHECK(BoincModel::stateText(state("suspended", "the computer is on batteries")) ==
          "Suspended: the computer is on batteries");
    CHECK(BoincModel::stateText(state("suspended")) == "Suspended");
    CHECK(BoincModel::stateText(state("error", "the GUI RPC password was refused")) ==
          "Error: the GUI RPC password was refused");
    CHECK(BoincModel::stateText(state("off")) == "Off");
    // nicer froze the work, and the client with it: nicerd's detail says why.
    CHECK(BoincModel::stateText(state("held", "paused: nicer holds the work until you resume it")) ==
          "Paused: nicer holds the work until you resume it");
    CHECK(BoincModel::stateText(state("held")) == "Held by nicer");

    CHECK_FALSE(BoincModel::matters(state("off")));
    CHECK(BoincModel::matters(state("starting")));
    CHECK(BoincModel::matters(state("error", "x")));
    BoincStatus competing = state("off");
    competing.systemService = "the system-wide BOINC client is enabled";
    CHECK(BoincModel::matters(competing));
}

TEST_CASE("whether nicer's preferences are in force is said in words", "[tray][boinc]") {
    BoincStatus s = state("running");
    s.overrideApplied = true;
    CHECK(BoincModel::preferencesText(s).startsWith("nicer's preferences are in force"));
    s.overrideApplied = false;
    CHECK(BoincModel::preferencesText(s).contains("not in force yet"));
    CHECK(BoincModel::preferencesText(state("starting")).contains("as soon as BOINC answers"));
}

TEST_CASE("the transfer limits say what BOINC may use now and why", "[tray][boinc]") {
    const LocaleGuard locale;
    BoincStatus s = state("running");
    s.maxDownRate = 1.5 * 1024 * 1024;
    s.maxUpRate = 256 * 1024;
    CHECK(BoincModel::limitsText(s) ==
          "Downloads limited to 1.5 MiB/s and uploads to 256.0 KiB/s so your own traffic comes first.");
    s.maxUpRate = 0;
    CHECK(BoincModel::limitsText(s) ==
          "Downloads limited to 1.5 MiB/s so your own traffic comes first; uploads not limited.");
    s.maxDownRate = 0;
    s.maxUpRate = 2048;
    CHECK(BoincModel::limitsText(s).startsWith("Uploads limited to 2.0 KiB/s"));
    s.maxUpRate = 0;
    CHECK(BoincModel::limitsText(s).startsWith("Transfers not limited now"));
}

TEST_CASE("a task's project is named by its URL, and shows the URL while its name is unknown",
          "[tray][boinc]") {
    const BoincStatus s = realisticBoinc(kNow);
    CHECK(BoincModel::projectName(s.projects, kEinstein) == "Einstein@Home");
    CHECK(BoincModel::projectName(s.projects, kAsteroids) == kAsteroids); // attached, page not fetched yet
    CHECK(BoincModel::projectName(s.projects, "https://gone.example/") == "https://gone.example/");
    CHECK(BoincModel::projectName({}, kEinstein) == kEinstein);
    const auto rows = BoincModel::taskRows(s, kNow);
    REQUIRE(rows.size() == 6);
    CHECK(rows[0].project == "Einstein@Home");
    CHECK(rows[2].project == "World Community Grid");
    CHECK(rows[3].project == "Rosetta@home");
    CHECK(rows[5].project == kAsteroids);
    const auto transfers = BoincModel::transferRows(s);
    CHECK(transfers[1].project == "Rosetta@home");
}

TEST_CASE("deadlines past or within a day are marked, those of finished tasks never", "[tray][boinc]") {
    CHECK(BoincModel::deadlineUrgency(task("running", kNow + 6 * kDay), kNow) == DeadlineUrgency::None);
    CHECK(BoincModel::deadlineUrgency(task("running", kNow + kDay), kNow) == DeadlineUrgency::None);
    CHECK(BoincModel::deadlineUrgency(task("running", kNow + kDay - 1), kNow) == DeadlineUrgency::Soon);
    CHECK(BoincModel::deadlineUrgency(task("ready", kNow + 20 * kHour), kNow) == DeadlineUrgency::Soon);
    CHECK(BoincModel::deadlineUrgency(task("running", kNow), kNow) == DeadlineUrgency::Past);
    CHECK(BoincModel::deadlineUrgency(task("running", kNow - 2 * kHour), kNow) == DeadlineUrgency::Past);
    // Still to be reported: the deadline still matters.
    CHECK(BoincModel::deadlineUrgency(task("ready-to-report", kNow - 1), kNow) == DeadlineUrgency::Past);
    // Over, or no deadline given: nothing to warn about.
    CHECK(BoincModel::deadlineUrgency(task("reported", kNow - kDay), kNow) == DeadlineUrgency::None);
    CHECK(BoincModel::deadlineUrgency(task("error", kNow - kDay), kNow) == DeadlineUrgency::None);
    CHECK(BoincModel::deadlineUrgency(task("aborted", kNow + kHour), kNow) == DeadlineUrgency::None);
    CHECK(BoincModel::deadlineUrgency(task("running", 0), kNow) == DeadlineUrgency::None);

    const auto rows = BoincModel::taskRows(realisticBoinc(kNow), kNow);
    CHECK(rows[0].urgency == DeadlineUrgency::None);
    CHECK(rows[0].deadlineToolTip == "Due in 6 d.");
    CHECK(rows[2].urgency == DeadlineUrgency::Past);
    CHECK(rows[2].deadlineToolTip.startsWith("The deadline has passed 2 h ago"));
    CHECK(rows[3].urgency == DeadlineUrgency::Soon);
    CHECK(rows[3].deadlineToolTip == "Due in less than a day (in 20 h).");
    // The local date and time, in the user's format.
    CHECK(rows[0].deadline == BoincModel::dateTimeText(kNow + 6 * kDay));
    BoincStatus none = realisticBoinc(kNow);
    none.tasks[0].deadline = 0;
    CHECK(BoincModel::taskRows(none, kNow)[0].deadline.isEmpty());
}

TEST_CASE("a task row has its state in words, its progress and its times", "[tray][boinc]") {
    const auto rows = BoincModel::taskRows(realisticBoinc(kNow), kNow);
    CHECK(rows[0].name == "h1_0685.45_O3aM1__O3aSSB2b_685.60Hz_5_2");
    CHECK(rows[0].state == "Running");
    CHECK(rows[0].fraction == Approx(0.634));
    CHECK(rows[0].progress == "63.4 %");
    CHECK(rows[0].elapsed == "3 h 12 min");
    CHECK(rows[0].remaining == "1 h 51 min");
    CHECK(rows[3].state == "Ready to start");
    CHECK(rows[3].elapsed == QString::fromUtf8("\u2014")); // not started: no time yet
    CHECK(rows[4].state == "Ready to report");
    CHECK(rows[4].progress == "100.0 %");
    CHECK(rows[4].remaining == QString::fromUtf8("\u2014"));
    CHECK(rows[5].state == "Downloading input files");

    CHECK(BoincModel::taskStateText(nicer::api::BoincTaskState::Uploading) == "Uploading the result");
    CHECK(BoincModel::taskStateText(nicer::api::BoincTaskState::Error) == "Computation error");
    // A newer nicerd's state reads as ready (api::BusKeywords), which the tray shows as such.
    CHECK(BoincModel::taskStateText(
              nicer::api::fromBusKeyword<nicer::api::BoincTaskState>("something-new")) == "Ready to start");

    // Out-of-range fractions from a confused client stay inside the bar.
    BoincStatus odd = realisticBoinc(kNow);
    odd.tasks[0].fractionDone = 1.7;
    odd.tasks[1].fractionDone = std::numeric_limits<double>::quiet_NaN();
    const auto oddRows = BoincModel::taskRows(odd, kNow);
    CHECK(oddRows[0].fraction == 1.0);
    CHECK(oddRows[1].fraction == 0.0);
    CHECK(oddRows[1].progress == "0.0 %");
}

TEST_CASE("a task that can still run shows BOINC's clock against the limit at which BOINC aborts it",
          "[tray][boinc]") {
    const LocaleGuard locale;
    const auto running = rowOf(clocked("running", 80, 160, 62));
    CHECK(running.elapsed == "1 min 20 s of 2 min 40 s");
    CHECK(running.elapsedToolTip ==
          "BOINC's clock: 1 min 20 s of the 2 min 40 s it allows before it aborts the task (50%); 1 min 2 s "
          "of CPU.");
    CHECK_FALSE(running.elapsedNearLimit);

    // Stopped by the volunteer or by BOINC, or preempted for another task: the clock of it still runs out.
    const auto suspended = rowOf(clocked("suspended", 3 * kHour + 12 * 60, 8 * kHour, 2 * kHour));
    CHECK(suspended.elapsed == "3 h 12 min of 8 h");
    CHECK(suspended.elapsedToolTip.contains("(40%); 2 h of CPU."));
    const auto preempted = rowOf(clocked("ready", 48 * 60, 2 * kHour, 40 * 60));
    CHECK(preempted.elapsed == "48 min of 2 h");
    CHECK(preempted.elapsedToolTip.startsWith("BOINC's clock: 48 min of the 2 h it allows"));

    // Without its CPU time (not read yet) the tooltip says nothing of it.
    const auto noCpu = rowOf(clocked("running", 80, 160));
    CHECK(noCpu.elapsedToolTip ==
          "BOINC's clock: 1 min 20 s of the 2 min 40 s it allows before it aborts the task (50%).");
    // Whole percents, rounded down: 100% only once the limit is reached.
    CHECK(rowOf(clocked("running", 29, 100)).elapsedToolTip.contains("(29%)"));
    CHECK(rowOf(clocked("running", 99.9, 100)).elapsedToolTip.contains("(99%"));
}

TEST_CASE("past 80% of its limit a task's elapsed time is a warning", "[tray][boinc]") {
    const LocaleGuard locale;
    // 2 h 8 min of 2 h 40 min is 80% exactly: not yet.
    const auto atEighty = rowOf(clocked("running", 2 * kHour + 8 * 60, 2 * kHour + 40 * 60, 2 * kHour));
    CHECK(atEighty.elapsed == "2 h 8 min of 2 h 40 min");
    CHECK_FALSE(atEighty.elapsedNearLimit);
    CHECK_FALSE(atEighty.elapsedToolTip.contains("close to the limit"));

    const auto past = rowOf(clocked("running", 2 * kHour + 16 * 60, 2 * kHour + 40 * 60, 2 * kHour + 5 * 60));
    CHECK(past.elapsedNearLimit);
    CHECK(past.elapsed == "2 h 16 min of 2 h 40 min");
    CHECK(
        past.elapsedToolTip ==
        "BOINC's clock: 2 h 16 min of the 2 h 40 min it allows before it aborts the task (85%, close to the "
        "limit); 2 h 5 min of CPU.");
    CHECK(rowOf(clocked("suspended", 81, 100)).elapsedNearLimit);
    // Past the limit (BOINC has not aborted it yet): still a warning, and over 100%.
    const auto over = rowOf(clocked("running", 170, 160));
    CHECK(over.elapsedNearLimit);
    CHECK(over.elapsedToolTip.contains("(106%, close to the limit)"));
}

TEST_CASE("without a known limit, or once a task is finished, its elapsed time shows as before",
          "[tray][boinc]") {
    const LocaleGuard locale;
    for (const double unknown :
         {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
        const auto row = rowOf(clocked("running", 80, unknown, 62));
        INFO(unknown);
        CHECK(row.elapsed == "1 min 20 s");
        CHECK(row.elapsedToolTip.isEmpty());
        CHECK_FALSE(row.elapsedNearLimit);
    }
    // BOINC's clock of a finished task has stopped: its limit no longer matters, even past 80%.
    for (const char* over : {"uploading", "ready-to-report", "reported", "error", "aborted"}) {
        const auto row = rowOf(clocked(over, 150, 160, 140));
        INFO(over);
        CHECK(row.elapsed == "2 min 30 s");
        CHECK(row.elapsedToolTip.isEmpty());
        CHECK_FALSE(row.elapsedNearLimit);
    }
    // Not started yet: no time to set against the limit.
    const auto waiting = rowOf(clocked("ready", 0, 160));
    CHECK(waiting.elapsed == QString::fromUtf8("\u2014"));
    CHECK(waiting.elapsedToolTip.isEmpty());
    CHECK(rowOf(clocked("downloading", 0, 160)).elapsed == QString::fromUtf8("\u2014"));
    // Nor do the sample tasks, which carry no limit.
    for (const auto& row : BoincModel::taskRows(realisticBoinc(kNow), kNow)) {
        CHECK_FALSE(row.elapsed.contains(" of "));
        CHECK(row.elapsedToolTip.isEmpty());
    }
}

TEST_CASE("how nicer keeps BOINC's clock is said only while it does", "[tray][boinc]") {
    BoincStatus s = state("running");
    CHECK(BoincModel::clockText(s).isEmpty());
    s.clock = "kept: BOINC counted 24% of the last minute; its tasks ran at 22% of their CPUs";
    CHECK(BoincModel::clockText(s) ==
          "BOINC's clock: kept: BOINC counted 24% of the last minute; its tasks ran at 22% of their CPUs");
}

TEST_CASE("durations read as days, hours, minutes and seconds", "[tray][boinc]") {
    CHECK(BoincModel::durationText(0) == "0 s");
    CHECK(BoincModel::durationText(-5) == "0 s");
    CHECK(BoincModel::durationText(45) == "45 s");
    CHECK(BoincModel::durationText(120) == "2 min");
    CHECK(BoincModel::durationText(125) == "2 min 5 s");
    CHECK(BoincModel::durationText(3600) == "1 h");
    CHECK(BoincModel::durationText(3 * 3600 + 12 * 60 + 40) == "3 h 12 min");
    CHECK(BoincModel::durationText(double(kDay) + 4 * 3600 + 59) == "1 d 4 h");
    CHECK(BoincModel::durationText(double(13 * kDay)) == "13 d");
    CHECK(BoincModel::durationText(std::numeric_limits<double>::infinity()) == "0 s");
}

TEST_CASE("transfers show bytes done of the total, the direction and the rate", "[tray][boinc]") {
    const LocaleGuard locale;
    const auto rows = BoincModel::transferRows(realisticBoinc(kNow));
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].file == "h1_0685.50_O3aM1");
    CHECK(rows[0].direction == "Download");
    CHECK_FALSE(rows[0].upload);
    CHECK(rows[0].progress == "9.5 MiB of 16.0 MiB");
    CHECK(rows[0].fraction == Approx(9961472.0 / 16777216.0));
    CHECK(rows[0].rate == "1.2 MiB/s");
    CHECK(rows[1].direction == "Upload");
    CHECK(rows[1].progress == "640.0 KiB of 2.4 MiB");
    CHECK(rows[1].rate == "180.0 KiB/s");
    CHECK(rows[2].progress == "0 bytes of 4.0 MiB");
    CHECK(rows[2].rate == "waiting");

    BoincStatus unknown = realisticBoinc(kNow);
    unknown.transfers[0].bytesTotal = 0;
    unknown.transfers[0].rate = 0;
    const auto row = BoincModel::transferRows(unknown)[0];
    CHECK(row.progress == "9.5 MiB");
    CHECK(row.fraction == 0.0);
    CHECK(row.rate == QString::fromUtf8("\u2014"));
    CHECK(BoincModel::dataSize(1536) == "1.5 KiB");
    CHECK(BoincModel::dataSize(-1) == "0 bytes");
}

TEST_CASE("projects show their credit and what holds them back", "[tray][boinc]") {
    const LocaleGuard locale;
    const auto rows = BoincModel::projectRows(realisticBoinc(kNow));
    REQUIRE(rows.size() == 4);
    CHECK(rows[0].name == "Einstein@Home");
    CHECK(rows[0].url == kEinstein);
    CHECK(rows[0].userCredit == "1,284,650");
    CHECK(rows[0].hostCredit == "312,481");
    CHECK(rows[0].recentCredit == "2,841.6/day");
    CHECK(rows[0].status.isEmpty());
    CHECK(rows[2].status == "No new tasks, Through an account manager");
    CHECK(rows[3].name == kAsteroids);
}

TEST_CASE("notices come latest first, errors marked, their text kept as it is", "[tray][boinc]") {
    auto s = realisticBoinc(kNow);
    // Two at the same second: the later sequence number first.
    s.notices.push_back({5, kNow - 20 * 60, "Einstein@Home", "", "Sending scheduler request", false});
    const auto rows = BoincModel::noticeRows(s);
    REQUIRE(rows.size() == 5);
    CHECK(rows[0].text == "Sending scheduler request");
    CHECK(rows[1].text.startsWith("nicer's preferences are in force"));
    CHECK(rows[1].source == "BOINC");
    CHECK(rows[2].error);
    CHECK(rows[2].source == "Rosetta@home");
    CHECK_FALSE(rows[3].error);
    CHECK(rows[3].title == "New search: O3 all-sky");
    CHECK(rows[3].text.contains("<Thanks>")); // plain text: nothing is taken for markup
    CHECK(rows[4].source == "BOINC");
    CHECK(rows[4].when == BoincModel::dateTimeText(kNow - 3 * kDay));
}

TEST_CASE("the system-service advice is cut into what it means, the command and what follows",
          "[tray][boinc]") {
    const auto advice =
        BoincModel::splitSystemService(QString::fromStdString(nicer::tray::test::systemServiceAdvice()));
    CHECK(advice.explanation.startsWith("The system-wide BOINC client (boinc-client.service) is enabled"));
    CHECK(advice.explanation.endsWith("To hand BOINC to nicer, run:"));
    CHECK(advice.command == "sudo systemctl disable --now boinc-client.service");
    CHECK(advice.after == "Then attach your projects with `nicer boinc attach`");

    const auto quoted = BoincModel::splitSystemService("stop it with `sudo systemctl stop boinc-client`.");
    CHECK(quoted.command == "sudo systemctl stop boinc-client");
    CHECK(quoted.explanation == "Stop it with `sudo systemctl stop boinc-client`.");

    const auto plain = BoincModel::splitSystemService("another BOINC client runs");
    CHECK(plain.command.isEmpty());
    CHECK(plain.explanation == "Another BOINC client runs");
    CHECK(plain.after.isEmpty());
}

TEST_CASE("dates are local, in the user's short format, to the minute", "[tray][boinc]") {
    {
        const LocaleGuard locale(QLocale::c());
        CHECK(BoincModel::dateTimeText(kNow) ==
              QDateTime::fromSecsSinceEpoch(kNow).toString("d MMM yyyy HH:mm"));
    }
    const LocaleGuard locale(QLocale(QLocale::German, QLocale::Germany));
    CHECK(BoincModel::dateTimeText(kNow) == QDateTime::fromSecsSinceEpoch(kNow).toString("dd.MM.yy HH:mm"));
}
