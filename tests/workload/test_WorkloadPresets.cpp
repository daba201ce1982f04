#include "fakes/FakeBinDir.h"
#include "workload/BoincCommand.h"
#include "workload/WorkloadPresets.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using nicer::test::FakeBinDir;
using nicer::workload::findPreset;
using nicer::workload::specForPreset;
using nicer::workload::workloadPresets;
namespace fs = std::filesystem;

namespace {

/// A scratch directory is all a data directory needs to be.
using DataDir = FakeBinDir;

const nicer::workload::WorkloadPreset& preset(const std::string& id) {
    const auto* found = findPreset(id);
    REQUIRE(found != nullptr);
    return *found;
}

} // namespace

TEST_CASE("the presets are the demo, the BOINC client and the Folding@home client", "[WorkloadPresets]") {
    std::vector<std::string> ids;
    for (const auto& p : workloadPresets()) {
        ids.push_back(p.id);
        CHECK_FALSE(p.name.empty());
        CHECK_FALSE(p.description.empty());
        CHECK((p.package.empty() != p.whereToGet.empty())); // one way to get the program, always
    }
    CHECK(ids == std::vector<std::string>{"demo", "boinc", "folding"});
    CHECK(nicer::workload::presetIdList() == "demo, boinc, folding or custom");

    CHECK(preset("demo").argv == nicer::workload::demoWorkload(1).argv);
    CHECK(preset("demo").onePerCpu);
    CHECK_THAT(preset("demo").description, Catch::Contains("no science"));
    CHECK(preset("boinc").argv ==
          std::vector<std::string>{"boinc", "--dir", "{dir}", "--gui_rpc_port", "{boinc-rpc-port}"});
    CHECK_FALSE(preset("boinc").onePerCpu);
    CHECK(preset("boinc").package == "boinc-client");
    CHECK(preset("folding").argv == std::vector<std::string>{"FAHClient", "--chdir", "{dir}"});
    CHECK_FALSE(preset("folding").onePerCpu);
    CHECK(preset("folding").package.empty());
    CHECK_THAT(preset("folding").whereToGet, Catch::Contains("foldingathome.org"));

    CHECK(findPreset("custom") == nullptr); // no fixed command: it is the one given to nicerd
    CHECK(findPreset("BOINC") == nullptr);
    CHECK(findPreset("") == nullptr);
}

TEST_CASE("specForPreset() runs a client once, in its own directory under the data directory",
          "[WorkloadPresets]") {
    const FakeBinDir bin;
    bin.add("boinc");
    bin.add("FAHClient");
    const DataDir data;
    const auto root = data.dir() / "share" / "nicer";

    const auto boinc = specForPreset(preset("boinc"), 8, root, bin.pathVariable());
    REQUIRE(boinc.ok());
    REQUIRE(boinc->argv.size() == 5);
    CHECK(std::vector(boinc->argv.begin(), boinc->argv.begin() + 4) ==
          std::vector<std::string>{"boinc", "--dir", (root / "boinc").string(), "--gui_rpc_port"});
    const auto client = nicer::workload::boincClientOf(boinc->argv);
    REQUIRE(client.ok());
    REQUIRE(client->has_value());
    CHECK((*client)->dir == root / "boinc");
    CHECK((*client)->rpcPort > 0); // 31418, or a free one when that is taken
    CHECK(boinc->instances == 1);
    CHECK_FALSE(boinc->demo);
    CHECK(boinc->preset == "boinc");
    CHECK(fs::is_directory(root / "boinc"));
    CHECK_FALSE(fs::exists(root / "folding"));

    const auto folding = specForPreset(preset("folding"), 8, root, bin.pathVariable());
    REQUIRE(folding.ok());
    CHECK(folding->argv == std::vector<std::string>{"FAHClient", "--chdir", (root / "folding").string()});
    CHECK(folding->instances == 1);
    CHECK(folding->preset == "folding");
    CHECK(fs::is_directory(root / "folding"));

    // Selecting it again finds the directory there and keeps what the client stored in it.
    std::ofstream(root / "boinc" / "client_state.xml") << "<client_state/>\n";
    REQUIRE(specForPreset(preset("boinc"), 8, root, bin.pathVariable()).ok());
    CHECK(fs::exists(root / "boinc" / "client_state.xml"));
}

TEST_CASE("specForPreset() runs the demo once per CPU and marks it as the demo", "[WorkloadPresets]") {
    const FakeBinDir bin;
    bin.add("md5sum");
    const DataDir data;
    const auto demo = specForPreset(preset("demo"), 3, data.dir() / "nicer", bin.pathVariable());
    REQUIRE(demo.ok());
    CHECK(demo->argv == std::vector<std::string>{"md5sum", "/dev/zero"});
    CHECK(demo->instances == 3);
    CHECK(demo->demo);
    CHECK(demo->preset == "demo");
    CHECK_FALSE(fs::exists(data.dir() / "nicer")); // the demo keeps no files
}

TEST_CASE("specForPreset() says which package to install when the program is missing", "[WorkloadPresets]") {
    const FakeBinDir bin;
    bin.add("md5sum");
    bin.add("FAHClient", "#!/bin/sh\nexit 0\n", false); // there, but not executable: no use
    const DataDir data;

    const auto boinc = specForPreset(preset("boinc"), 2, data.dir() / "nicer", bin.pathVariable());
    REQUIRE_FALSE(boinc.ok());
    CHECK(boinc.error().message == "the BOINC client (boinc) is not installed: install the Debian package "
                                   "boinc-client, or choose another workload");
    CHECK(nicer::workload::notInstalledMessage(preset("boinc")) + ", or choose another workload" ==
          boinc.error().message);

    const auto folding = specForPreset(preset("folding"), 2, data.dir() / "nicer", bin.pathVariable());
    REQUIRE_FALSE(folding.ok());
    CHECK_THAT(folding.error().message,
               Catch::StartsWith("the Folding@home client (FAHClient) is not installed") &&
                   Catch::Contains("not in Debian") && Catch::Contains("foldingathome.org") &&
                   Catch::EndsWith("or choose another workload"));
    // Nothing was created for a client that cannot run.
    CHECK_FALSE(fs::exists(data.dir() / "nicer"));
}

TEST_CASE("specForPreset() says so when the client's directory cannot be created", "[WorkloadPresets]") {
    const FakeBinDir bin;
    bin.add("boinc");
    const DataDir data;
    std::ofstream(data.dir() / "nicer") << "a file where the data directory should be\n";
    const auto boinc = specForPreset(preset("boinc"), 2, data.dir() / "nicer", bin.pathVariable());
    REQUIRE_FALSE(boinc.ok());
    CHECK_THAT(boinc.error().message,
               Catch::StartsWith("cannot create " + (data.dir() / "nicer" / "boinc").string()) &&
                   Catch::Contains("is writable"));
}
