#include "daemon/DaemonConfig.h"

#include <catch2/catch.hpp>

using nicer::daemon::defaultDownloadDir;

TEST_CASE("downloads go to the workload preset's directory, else to downloads", "[DaemonConfig]") {
    const std::filesystem::path data = "/home/me/.local/share/nicer";
    CHECK(defaultDownloadDir(data, "boinc") == data / "boinc");
    CHECK(defaultDownloadDir(data, "folding") == data / "folding");
    CHECK(defaultDownloadDir(data, "demo") == data / "downloads"); // the demo keeps no files
    CHECK(defaultDownloadDir(data, "custom") == data / "downloads");
}
