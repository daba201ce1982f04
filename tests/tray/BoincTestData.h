#pragma once
// A BOINC client as a volunteer's machine shows it: four projects (one just attached, its name not known
// yet), tasks in every state with deadlines far, near and past, transfers both ways, notices and an error.
// The tray's BOINC tests and its screenshot use it; times are relative to @p now.

#include "api/Boinc.h"

#include <cstdint>
#include <string>

namespace nicer::tray::test {

/// A fixed clock for the BOINC tests: the model and the panel take "now" as a value.
inline constexpr std::int64_t kNow = 1'715'000'000;

inline constexpr const char* kEinstein = "https://einsteinathome.org/";
inline constexpr const char* kRosetta = "https://boinc.bakerlab.org/rosetta/";
inline constexpr const char* kWcg = "https://www.worldcommunitygrid.org/";
inline constexpr const char* kAsteroids = "https://asteroidsathome.net/boinc/";

/// The advice nicerd gives while Debian's boinc-client.service is enabled.
inline std::string systemServiceAdvice() {
    return "the system-wide BOINC client (boinc-client.service) is enabled: it runs as the user boinc, "
           "outside "
           "nicer's control, and competes with your programs and with the work nicer governs. To hand BOINC "
           "to nicer, run: sudo systemctl disable --now boinc-client.service (then attach your projects with "
           "`nicer boinc attach`)";
}

inline api::BoincStatus realisticBoinc(std::int64_t now, bool withSystemService = false) {
    constexpr std::int64_t hour = 3600;
    constexpr std::int64_t day = 24 * hour;
    api::BoincStatus s;
    s.state = api::BoincState::Running;
    s.overrideApplied = true;
    s.maxDownRate = 1.5 * 1024 * 1024;
    s.maxUpRate = 256 * 1024;
    if (withSystemService) {
        s.systemService = systemServiceAdvice();
    }
    s.projects = {
        {kEinstein, "Einstein@Home", 1'284'650.4, 312'480.9, 2'841.6, false, false, false},
        {kRosetta, "Rosetta@home", 98'320.0, 45'112.2, 612.3, false, false, false},
        {kWcg, "World Community Grid", 412'006.0, 88'940.5, 1'020.4, false, true, true},
        {kAsteroids, "", 0.0, 0.0, 0.0, false, false, false},
    };
    s.tasks = {
        {"h1_0685.45_O3aM1__O3aSSB2b_685.60Hz_5_2", kEinstein, api::BoincTaskState::Running, 0.634,
         3 * hour + 12 * 60, hour + 51 * 60, now + 6 * day},
        {"LATeah4021L08_972.0_0_0.0_123456_0", kEinstein, api::BoincTaskState::Running, 0.281, 48 * 60,
         2 * hour + 4 * 60, now + 13 * day},
        {"OPN1_0061382_02918_0", kWcg, api::BoincTaskState::Running, 0.455, 2 * hour + 40 * 60,
         3 * hour + 10 * 60, now - 2 * hour},
        {"rb_05_14_73821_72405__t000__0_C1_SAVE_ALL_OUT_1634_2_0", kRosetta, api::BoincTaskState::Ready, 0.0,
         0.0, 8 * hour, now + 20 * hour},
        {"rb_05_13_70012_71933__t000__1_C1_SAVE_ALL_OUT_1781_0_0", kRosetta,
         api::BoincTaskState::ReadyToReport, 1.0, 7 * hour + 58 * 60, 0.0, now + 2 * day},
        {"ps_230512_input_21533_6_0", kAsteroids, api::BoincTaskState::Downloading, 0.0, 0.0, 5 * hour,
         now + 9 * day},
    };
    s.transfers = {
        {"h1_0685.50_O3aM1", kEinstein, false, 16'777'216.0, 9'961'472.0, 1'258'291.0,
         api::BoincTransferState::Active},
        {"rb_05_13_70012_71933__t000__1_C1_SAVE_ALL_OUT_1781_0_r1781_0", kRosetta, true, 2'516'582.0,
         655'360.0, 184'320.0, api::BoincTransferState::Active},
        {"ps_230512_input_21533", kAsteroids, false, 4'194'304.0, 0.0, 0.0, api::BoincTransferState::Waiting},
    };
    s.notices = {
        {1, now - 3 * day, "", "", "Starting BOINC client version 7.20.5 for x86_64-pc-linux-gnu", false},
        {2, now - 2 * day, "Einstein@Home", "New search: O3 all-sky",
         "The search for continuous gravitational waves in LIGO's O3 data has begun. <Thanks> for your help!",
         false},
        {3, now - 5 * hour, "Rosetta@home", "", "Scheduler request failed: HTTP service unavailable", true},
        {4, now - 20 * 60, "", "", "nicer's preferences are in force: BOINC computes whenever nicer lets it",
         false},
    };
    return s;
}

} // namespace nicer::tray::test
