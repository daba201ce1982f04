#include "fakes/FakeBinDir.h"
#include "workload/WorkloadChooser.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

using nicer::api::PresetInfo;
using nicer::test::FakeBinDir;
using nicer::workload::checkExplicitWorkload;
using nicer::workload::startupPreset;
using nicer::workload::WorkloadChooser;
namespace fs = std::filesystem;

namespace {

/// A scratch directory is all a data directory needs to be.
using DataDir = FakeBinDir;

const PresetInfo& choice(const std::vector<PresetInfo>& choices, const std::string& id) {
    for (const auto& c : choices) {
        if (c.id == id) {
            return c;
        }
    }
    FAIL("no choice " << id);
    throw std::logic_error("unreachable");
}

} // namespace

TEST_CASE("choices() lists the presets and custom, each available only when its program is there",
          "[WorkloadChooser]") {
    const FakeBinDir bin;
    bin.add("boinc");
    const DataDir data;

    const WorkloadChooser noCommand({}, 4, data.dir(), bin.pathVariable());
    const auto choices = noCommand.choices();
    std::vector<std::string> ids;
    for (const auto& c : choices) {
        ids.push_back(c.id);
    }
    CHECK(ids == std::vector<std::string>{"demo", "boinc", "folding", "custom"});
    CHECK_FALSE(choice(choices, "demo").available); // no md5sum in this PATH
    CHECK(choice(choices, "boinc").available);
    CHECK(choice(choices, "boinc").name == "BOINC client");
    CHECK(choice(choices, "boinc").description == nicer::workload::findPreset("boinc")->description);
    CHECK_FALSE(choice(choices, "folding").available);
    CHECK_FALSE(choice(choices, "custom").available);
    CHECK_THAT(choice(choices, "custom").description, Catch::Contains("none was given"));
    CHECK(fs::is_empty(data.dir())); // listing creates nothing

    bin.add("my-work");
    const WorkloadChooser withCommand({"my-work", "--flag"}, 4, data.dir(), bin.pathVariable());
    const auto custom = choice(withCommand.choices(), "custom");
    CHECK(custom.available);
    CHECK_THAT(custom.description, Catch::Contains("my-work --flag"));

    const WorkloadChooser missingCommand({"nicer-gone"}, 4, data.dir(), bin.pathVariable());
    CHECK_FALSE(choice(missingCommand.choices(), "custom").available);
}

TEST_CASE("resolve() gives the workload for an id, or says what is wrong", "[WorkloadChooser]") {
    const FakeBinDir bin;
    bin.add("boinc");
    bin.add("md5sum");
    bin.add("my-work");
    const DataDir data;
    const WorkloadChooser chooser({"my-work", "-n"}, 3, data.dir(), bin.pathVariable());

    const auto demo = chooser.resolve("demo");
    REQUIRE(demo.ok());
    CHECK(demo->instances == 3);
    CHECK(demo->demo);
    const auto boinc = chooser.resolve("boinc");
    REQUIRE(boinc.ok());
    CHECK(boinc->instances == 1);
    REQUIRE(boinc->argv.size() == 5);
    CHECK(boinc->argv[2] == (data.dir() / "boinc").string());
    CHECK(fs::is_directory(data.dir() / "boinc"));
    const auto custom = chooser.resolve("custom");
    REQUIRE(custom.ok());
    CHECK(custom->argv == std::vector<std::string>{"my-work", "-n"});
    CHECK(custom->instances == 3);
    CHECK_FALSE(custom->demo);
    CHECK(custom->preset == "custom");

    const auto unknown = chooser.resolve("seti");
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().message == "unknown workload preset 'seti': choose demo, boinc, folding or custom");
    const auto folding = chooser.resolve("folding");
    REQUIRE_FALSE(folding.ok());
    CHECK_THAT(folding.error().message, Catch::Contains("FAHClient") && Catch::Contains("not installed"));

    const WorkloadChooser noCommand({}, 3, data.dir(), bin.pathVariable());
    const auto none = noCommand.resolve("custom");
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message == nicer::workload::customUnavailableMessage());
    CHECK_THAT(none.error().message, Catch::Contains("nicerd -- COMMAND"));

    const WorkloadChooser gone({"nicer-gone"}, 3, data.dir(), bin.pathVariable());
    const auto missing = gone.resolve("custom");
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(missing.error().message, Catch::Contains("'nicer-gone' is not in PATH"));
}

TEST_CASE("known() accepts the presets and custom only", "[WorkloadChooser]") {
    for (const char* id : {"demo", "boinc", "folding", "custom"}) {
        CHECK(WorkloadChooser::known(id));
    }
    for (const char* id : {"", "Demo", "seti", "boinc "}) {
        CHECK_FALSE(WorkloadChooser::known(id));
    }
}

TEST_CASE("nicerd's explicit workload options are checked together", "[WorkloadChooser]") {
    CHECK(checkExplicitWorkload("", false).ok());
    CHECK(checkExplicitWorkload("", true).ok());
    CHECK(checkExplicitWorkload("boinc", false).ok());
    CHECK(checkExplicitWorkload("custom", true).ok());

    const auto unknown = checkExplicitWorkload("seti", false);
    REQUIRE_FALSE(unknown.ok());
    CHECK_THAT(unknown.error().message, Catch::StartsWith("workload-preset = 'seti' is unknown") &&
                                            Catch::Contains("demo, boinc, folding or custom"));
    const auto customWithout = checkExplicitWorkload("custom", false);
    REQUIRE_FALSE(customWithout.ok());
    CHECK_THAT(customWithout.error().message, Catch::Contains("no custom workload was given"));
    const auto both = checkExplicitWorkload("boinc", true);
    REQUIRE_FALSE(both.ok());
    CHECK_THAT(both.error().message, Catch::Contains("keep one"));
}

TEST_CASE("an explicit workload wins over the one chosen at run time, which wins over the demo",
          "[WorkloadChooser]") {
    const std::optional<std::string> none;
    const std::optional<std::string> boinc = "boinc";
    CHECK(startupPreset("", false, none) == "demo");
    CHECK(startupPreset("", false, boinc) == "boinc");
    CHECK(startupPreset("", true, boinc) == "custom");
    CHECK(startupPreset("folding", false, boinc) == "folding");
    CHECK(startupPreset("demo", false, boinc) == "demo");
    CHECK(startupPreset("custom", true, boinc) == "custom");
}
