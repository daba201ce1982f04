#include "daemon/DaemonConfig.h"

#include <catch2/catch.hpp>

using nicer::daemon::defaultDownloadDir;
using nicer::daemon::parseMemoryMaxPercent;

TEST_CASE("downloads go to the workload preset's directory, else to downloads", "[DaemonConfig]") {
    const std::filesystem::path data = "/home/me/.local/share/nicer";
    CHECK(defaultDownloadDir(data, "boinc") == data / "boinc");
    CHECK(defaultDownloadDir(data, "folding") == data / "folding");
    CHECK(defaultDownloadDir(data, "demo") == data / "downloads"); // the demo keeps no files
    CHECK(defaultDownloadDir(data, "custom") == data / "downloads");
}

TEST_CASE("memory-max takes a percentage from 10 to 100 or none, and names what it got otherwise",
          "[DaemonConfig]") {
    CHECK(parseMemoryMaxPercent("50").value() == 50.0);
    CHECK(parseMemoryMaxPercent("62.5").value() == 62.5);
    CHECK(parseMemoryMaxPercent("10%").value() == 10.0);
    CHECK(parseMemoryMaxPercent("100").value() == 100.0);
    CHECK(parseMemoryMaxPercent("none").value() == 100.0);
    for (const char* bad : {"9", "0", "-5", "101", "lots", "", "50 %", "nan"}) {
        CAPTURE(bad);
        const auto parsed = parseMemoryMaxPercent(bad);
        REQUIRE_FALSE(parsed.ok());
        CHECK_THAT(parsed.error().message,
                   Catch::Contains("from 10 to 100") && Catch::Contains(std::string("got '") + bad + "'"));
    }
}
