#include "control/ParameterText.h"
#include "daemon/SettingPrecedence.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace nicer;
using namespace std::chrono_literals;
using daemon::chooseParameters;
using daemon::chooseProgramList;
using daemon::chooseWorkload;

namespace {

const std::string kParameterFile = "/state/nicer/parameters.conf";
const std::string kWorkloadFile = "/state/nicer/workload.conf";

/// A fresh state directory for one case, with nicerd's two files in it when given.
daemon::DaemonConfig stateConfig(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("nicer-precedence-test-" + std::to_string(::getpid())) / name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    daemon::DaemonConfig config;
    config.parameterFile = dir / "parameters.conf";
    config.workloadFile = dir / "workload.conf";
    config.programListFile = dir / "exclusive-programs.conf";
    config.dataDir = dir / "data";
    config.pathVariable = "/usr/bin:/bin";
    return config;
}

using CommandLineGiven = daemon::CommandLineSettings;

void save(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path) << text;
}

} // namespace

TEST_CASE("a parameter on the command line holds over the one saved at run time, and the log says so",
          "[SettingPrecedence]") {
    control::ControllerParams given; // the command line's reserve-band over the default
    given.reserveBand = 0.05;
    control::ControllerParams saved;
    saved.reserveBand = 0.2;
    saved.maxMultiplier = 4;
    const auto chosen = chooseParameters(given, {"reserve-band"}, saved, kParameterFile);
    CHECK(chosen.params.reserveBand == 0.05);
    CHECK(chosen.params.maxMultiplier == 4); // not on the command line: the saved one
    REQUIRE(chosen.notes.size() == 1);
    CHECK_THAT(chosen.notes[0],
               Catch::Contains("reserve-band = 0.05 from the command line holds for this run "
                               "over 0.2, set at run time and kept in " +
                               kParameterFile));
}

TEST_CASE("a parameter saved at run time holds over nicerd.conf's", "[SettingPrecedence]") {
    control::ControllerParams given; // nicerd.conf's period and reserve-band, not on the command line
    given.period = 2s;
    given.reserveBand = 0.1;
    control::ControllerParams saved;
    saved.reserveBand = 0.2;
    const auto chosen = chooseParameters(given, {}, saved, kParameterFile);
    CHECK(chosen.params == saved);
    CHECK(chosen.params.period == control::ControllerParams{}.period);
    REQUIRE(chosen.notes.size() == 2);
    CHECK_THAT(chosen.notes[0] + chosen.notes[1],
               Catch::Contains("reserve-band = 0.2, set at run time and kept in " + kParameterFile +
                               ", holds over nicerd.conf's 0.1"));
}

TEST_CASE("a saved parameter equal to the command line's needs no line in the log", "[SettingPrecedence]") {
    control::ControllerParams params;
    params.reserveBand = 0.2;
    const auto chosen = chooseParameters(params, {"reserve-band", "period"}, params, kParameterFile);
    CHECK(chosen.params == params);
    CHECK(chosen.notes.empty());
}

TEST_CASE("a change at run time keeps a command-line flag's value out of the file, unless it changes that "
          "parameter",
          "[SettingPrecedence]") {
    control::ControllerParams kept; // set at run time before, and held beneath the flag
    kept.reserveBand = 0.2;
    control::ControllerParams running = kept;
    running.reserveBand = 0.1; // --reserve-band 0.1
    control::ControllerParams requested = running;
    requested.maxMultiplier = 4; // nicer set max-multiplier=4
    const auto first = daemon::parametersToKeep(requested, running, kept, {"reserve-band"});
    CHECK(first.maxMultiplier == 4);
    CHECK(first.reserveBand == 0.2); // the flag holds for this run only
    // Then the flag's own parameter is changed at run time: kept from then on.
    running = requested;
    requested.reserveBand = 0.3;
    const auto second = daemon::parametersToKeep(requested, running, first, {"reserve-band"});
    CHECK(second.reserveBand == 0.3);
    CHECK(second.maxMultiplier == 4);
    running = requested;
    requested.maxMultiplier = 5;
    CHECK(daemon::parametersToKeep(requested, running, second, {"reserve-band"}).reserveBand == 0.3);
}

TEST_CASE("a workload on the command line holds over the one chosen at run time", "[SettingPrecedence]") {
    SECTION("a command after --") {
        const auto chosen = chooseWorkload("", true, true, std::string("boinc"), kWorkloadFile);
        CHECK(chosen.preset.empty()); // the command: custom, as without a saved choice
        CHECK_FALSE(chosen.chosenAtRunTime);
        REQUIRE(chosen.notes.size() == 1);
        CHECK_THAT(chosen.notes[0],
                   Catch::Contains("the workload from the command line, custom, holds for this "
                                   "run over boinc, chosen at run time and kept in " +
                                   kWorkloadFile));
    }
    SECTION("--workload-preset") {
        const auto chosen = chooseWorkload("folding", false, true, std::string("boinc"), kWorkloadFile);
        CHECK(chosen.preset == "folding");
        CHECK_FALSE(chosen.chosenAtRunTime);
        CHECK(chosen.notes.size() == 1);
    }
}

TEST_CASE("a workload chosen at run time holds over nicerd.conf's, and over the demo",
          "[SettingPrecedence]") {
    SECTION("nicerd.conf's command") {
        const auto chosen = chooseWorkload("", true, false, std::string("boinc"), kWorkloadFile);
        CHECK(chosen.preset == "boinc");
        CHECK(chosen.chosenAtRunTime);
        REQUIRE(chosen.notes.size() == 1);
        CHECK_THAT(chosen.notes[0], Catch::Contains("the workload boinc, chosen at run time and kept in " +
                                                    kWorkloadFile + ", holds over nicerd.conf's custom"));
    }
    SECTION("nicerd.conf's preset") {
        const auto chosen = chooseWorkload("folding", false, false, std::string("demo"), kWorkloadFile);
        CHECK(chosen.preset == "demo");
        CHECK(chosen.chosenAtRunTime);
    }
    SECTION("no workload given at all") {
        const auto chosen = chooseWorkload("", false, false, std::string("boinc"), kWorkloadFile);
        CHECK(chosen.preset == "boinc");
        CHECK(chosen.notes.empty()); // nothing it holds over
    }
    SECTION("nothing chosen at run time: nicerd.conf's") {
        const auto chosen = chooseWorkload("folding", false, false, std::nullopt, kWorkloadFile);
        CHECK(chosen.preset == "folding");
        CHECK_FALSE(chosen.chosenAtRunTime);
    }
}

TEST_CASE("named programs on the command line hold over those set at run time, which hold over nicerd.conf's",
          "[SettingPrecedence]") {
    using Names = std::vector<std::string>;
    const std::string source = "/state/nicer/exclusive-programs.conf";
    SECTION("the command line's, for this run, with a line in the log") {
        const auto chosen = chooseProgramList({"blender"}, true, Names{"gimp", "steam"}, source);
        CHECK(chosen.names == Names{"blender"});
        REQUIRE(chosen.notes.size() == 1);
        CHECK(chosen.notes[0] == "the named programs from the command line (blender) hold for this run over "
                                 "gimp steam, set at run time and kept in " +
                                     source);
    }
    SECTION("set at run time, over nicerd.conf's; an empty list set at run time too") {
        auto chosen = chooseProgramList({"blender"}, false, Names{"gimp"}, source);
        CHECK(chosen.names == Names{"gimp"});
        REQUIRE(chosen.notes.size() == 1);
        CHECK_THAT(chosen.notes[0], Catch::Contains("hold over nicerd.conf's (blender;"));
        chosen = chooseProgramList({"blender"}, false, Names{}, source);
        CHECK(chosen.names.empty());
        CHECK_THAT(chosen.notes.at(0), Catch::Contains("the named programs none, set at run time"));
    }
    SECTION("nothing set at run time: nicerd.conf's, and no line") {
        const auto chosen = chooseProgramList({"blender"}, false, std::nullopt, source);
        CHECK(chosen.names == Names{"blender"});
        CHECK(chosen.notes.empty());
    }
    SECTION("the same list on both sides needs no line") {
        CHECK(chooseProgramList({"blender"}, true, Names{"blender"}, source).notes.empty());
        CHECK(chooseProgramList({}, false, Names{}, source).notes.empty());
    }
}

TEST_CASE("the saved files are read and put where the rule says", "[SettingPrecedence]") {
    auto config = stateConfig("files");
    config.params.reserveBand = 0.05; // the command line's
    config.params.maxMultiplier = 8;  // nicerd.conf's
    control::ControllerParams saved;
    saved.reserveBand = 0.2;
    saved.maxMultiplier = 4;
    save(config.parameterFile, control::writeParameterFile(saved));
    config.command = {"sleep", "60"}; // nicerd.conf's workload
    save(config.workloadFile, "preset = demo\n");
    config.exclusivePrograms = {"blender"}; // nicerd.conf's
    save(config.programListFile, "programs = gimp steam\n");
    const auto notes = daemon::applySavedSettings(config, {{"reserve-band"}, false});
    REQUIRE(notes.ok());
    CHECK(config.params.reserveBand == 0.05);
    CHECK(config.params.maxMultiplier == 4);
    CHECK(config.workloadPreset == "demo");
    CHECK(config.exclusivePrograms == std::vector<std::string>{"gimp", "steam"});
    CHECK(notes->size() == 4);
    CHECK(config.commandLineParameters == std::vector<std::string>{"reserve-band"});
    CHECK(config.keptParams == saved);
}

TEST_CASE("the saved files' faults stop the start, naming the file, unless the command line overrides them",
          "[SettingPrecedence]") {
    auto config = stateConfig("faults");
    SECTION("parameters cut short") {
        save(config.parameterFile, "reserve-band = 0.2\n");
        const auto notes = daemon::applySavedSettings(config, {});
        REQUIRE_FALSE(notes.ok());
        CHECK_THAT(notes.error().message, Catch::Contains(config.parameterFile.string() + ": no line for") &&
                                              Catch::Contains("fix or delete the file"));
    }
    SECTION("the command line's parameters do not fit with the saved ones") {
        control::ControllerParams saved;
        saved.maxMultiplier = 4;
        save(config.parameterFile, control::writeParameterFile(saved));
        config.params.minMultiplier = 6;
        const auto notes = daemon::applySavedSettings(config, {{"min-multiplier"}, false});
        REQUIRE_FALSE(notes.ok());
        CHECK_THAT(notes.error().message,
                   Catch::Contains("do not fit with those set at run time and kept in " +
                                   config.parameterFile.string()));
    }
    SECTION("an unknown workload") {
        save(config.workloadFile, "preset = seti\n");
        const auto notes = daemon::applySavedSettings(config, {});
        REQUIRE_FALSE(notes.ok());
        CHECK_THAT(notes.error().message, Catch::Contains("preset = 'seti' is unknown"));
        config.command = {"sleep", "60"}; // on the command line: the file is no obstacle
        CHECK(daemon::applySavedSettings(config, {{}, true}).ok());
        CHECK(config.workloadPreset.empty());
    }
    SECTION("named programs that cannot be programs, or a file cut short") {
        save(config.programListFile,
             GENERATE(std::string("programs = gimp /usr/bin/blender\n"), std::string("programs = gimp")));
        const auto notes = daemon::applySavedSettings(config, {});
        REQUIRE_FALSE(notes.ok());
        CHECK_THAT(
            notes.error().message,
            Catch::Contains(config.programListFile.string()) &&
                Catch::Contains("fix or delete the file; it holds the named programs set at run time"));
        config.exclusivePrograms = {"blender"}; // on the command line: the file is no obstacle
        CommandLineGiven given;
        given.exclusivePrograms = true;
        REQUIRE(daemon::applySavedSettings(config, given).ok());
        CHECK(config.exclusivePrograms == std::vector<std::string>{"blender"});
    }
    SECTION("custom kept, but no command given") {
        save(config.workloadFile, "preset = custom\n");
        config.workloadPreset = "folding";
        const auto notes = daemon::applySavedSettings(config, {});
        REQUIRE_FALSE(notes.ok());
        CHECK_THAT(notes.error().message,
                   Catch::Contains("custom was chosen at run time and is kept in " +
                                   config.workloadFile.string() +
                                   ": delete that file to start with nicerd.conf's workload"));
    }
}
