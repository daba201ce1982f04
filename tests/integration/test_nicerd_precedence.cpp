// Which value holds when nicerd starts, through the real nicerd and its files: the command line, then what
// was set at run time (kept in the state directory), then nicerd.conf, then the defaults (core/daemon/
// SettingPrecedence.h; its unit tests cover each branch).
#include "NicerSlice.h"
#include "NicerdProcess.h"
#include "cli/RunCommand.h"
#include "control/ControllerParams.h"
#include "control/ParameterText.h"
#include "dbus/client/DaemonClient.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace nicer;
using test::freshStateDir;
using test::NicerdProcess;

namespace {

/// A state directory with nicerd.conf and the two files nicerd keeps of what was set at run time.
std::filesystem::path stateWith(const std::string& name, const std::string& conf, double savedReserveBand,
                                const std::string& savedPreset) {
    const auto dir = freshStateDir(name);
    std::filesystem::create_directories(dir / "nicer");
    std::ofstream(dir / "nicer" / "nicerd.conf") << conf;
    control::ControllerParams saved;
    saved.reserveBand = savedReserveBand;
    std::ofstream(dir / "nicer" / "parameters.conf") << control::writeParameterFile(saved);
    std::ofstream(dir / "nicer" / "workload.conf") << "preset = " << savedPreset << '\n';
    return dir;
}

api::DaemonState state() {
    auto s = test::tryDaemonStatus();
    REQUIRE(s);
    return *s;
}

} // namespace

TEST_CASE(
    "what was set at run time holds over nicerd.conf, for the parameters and the workload, and a change "
    "at run time is kept",
    "[nicerd][config]") {
    const auto dir =
        stateWith("precedence-saved", "reserve-band = 0.1\nworkload = [\"sleep\", \"600\"]\n", 0.2, "demo");
    NicerdProcess daemon({"--period", "0.25", "--instances", "1"}, dir);
    REQUIRE(daemon.waitReady());
    const auto s = state();
    CHECK(s.params.reserveBand == 0.2);
    CHECK(s.workloadPreset == "demo");
    CHECK_THAT(daemon.log(), Catch::Contains("reserve-band = 0.2, set at run time and kept in ") &&
                                 Catch::Contains("holds over nicerd.conf's 0.1") &&
                                 Catch::Contains("the workload demo, chosen at run time") &&
                                 Catch::Contains("holds over nicerd.conf's custom"));
    REQUIRE(test::runCommand(std::string(NICER_CLI) + " set reserve-band=0.3").exitCode == 0);
    CHECK(state().params.reserveBand == 0.3);
    CHECK_THAT(test::readFile((dir / "nicer" / "parameters.conf").string()),
               Catch::Contains("reserve-band = 0.3\n"));
    CHECK(daemon.stop() == 0);
}

TEST_CASE("a workload on the command line holds over the one chosen at run time, for that run only",
          "[nicerd][config]") {
    const auto dir = stateWith("precedence-workload", "", 0.2, "demo");
    {
        NicerdProcess daemon({"--period", "0.25", "--instances", "1", "--", "sleep", "600"}, dir);
        REQUIRE(daemon.waitReady());
        CHECK(state().workloadPreset == "custom");
        CHECK_THAT(daemon.log(),
                   Catch::Contains("the workload from the command line, custom, holds for this run "
                                   "over demo, chosen at run time and kept in "));
        CHECK(daemon.stop() == 0);
    }
    NicerdProcess daemon({"--period", "0.25", "--instances", "1"}, dir);
    REQUIRE(daemon.waitReady());
    CHECK(state().workloadPreset == "demo");
    CHECK(daemon.stop() == 0);
}

TEST_CASE("a parameter on the command line holds over the one set at run time, for that run only",
          "[nicerd][config]") {
    const auto dir = stateWith("precedence-parameter", "", 0.2, "demo");
    {
        NicerdProcess daemon({"--period", "0.25", "--instances", "1", "--reserve-band", "0.1"}, dir);
        REQUIRE(daemon.waitReady());
        CHECK(state().params.reserveBand == 0.1);
        CHECK_THAT(daemon.log(),
                   Catch::Contains("reserve-band = 0.1 from the command line holds for this run "
                                   "over 0.2, set at run time and kept in "));
        // Another parameter set at run time meanwhile is kept; the flag's own value is not.
        auto client = dbus::DaemonClient::connect();
        REQUIRE(client.ok());
        auto changed = state().params;
        changed.maxMultiplier = 4;
        REQUIRE(client->setParameters(changed).ok());
        CHECK(state().params.maxMultiplier == 4);
        CHECK(state().params.reserveBand == 0.1);
        CHECK(daemon.stop() == 0);
    }
    NicerdProcess daemon({"--period", "0.25", "--instances", "1"}, dir);
    REQUIRE(daemon.waitReady());
    CHECK(state().params.reserveBand == 0.2);
    CHECK(state().params.maxMultiplier == 4);
    CHECK(daemon.stop() == 0);
}

TEST_CASE("the schedule's hours from nicerd.conf, quoted or not, then set at run time and kept over it",
          "[nicerd][config][schedule]") {
    // Unquoted, the config file's reader splits the value at its commas ("sat,sun"): it must read as written.
    const auto dir = freshStateDir("precedence-hours");
    std::filesystem::create_directories(dir / "nicer");
    std::ofstream(dir / "nicer" / "nicerd.conf") << "compute-hours = mon-fri 18:00-08:00; sat,sun any\n"
                                                    "transfer-hours = \"22:00-06:00; sun any\"\n";
    {
        NicerdProcess daemon({"--period", "0.25", "--instances", "1"}, dir);
        REQUIRE(daemon.waitReady());
        CHECK(state().params.computeHours.text() == "mon-fri 18:00-08:00; sat,sun any");
        CHECK(state().params.transferHours.text() == "22:00-06:00; sun any");
        // `nicer set`, with the same words as the tray's field.
        const auto set = test::runCommand(test::kNicer + " set 'compute-hours=09:00-17:00; sun none'");
        INFO(set.err);
        REQUIRE(set.exitCode == 0);
        CHECK(state().params.computeHours.text() == "09:00-17:00; sun none");
        const auto bad = test::runCommand(test::kNicer + " set compute-hours=9-17");
        CHECK(bad.exitCode != 0);
        CHECK_THAT(bad.err, Catch::Contains("compute-hours: '9-17' does not end with hours"));
        CHECK(state().params.computeHours.text() == "09:00-17:00; sun none");
        CHECK(daemon.stop() == 0);
    }
    NicerdProcess daemon({"--period", "0.25", "--instances", "1"}, dir);
    REQUIRE(daemon.waitReady());
    CHECK(state().params.computeHours.text() == "09:00-17:00; sun none");
    CHECK_THAT(daemon.log(),
               Catch::Contains("compute-hours = 09:00-17:00; sun none, set at run time") &&
                   Catch::Contains("holds over nicerd.conf's mon-fri 18:00-08:00; sat,sun any"));
    CHECK(daemon.stop() == 0);
}
