#include "boinc/ClientDirectory.h"
#include "boinc/GlobalPrefsOverride.h"
#include "boinc/SystemService.h"
#include "fakes/FakeBinDir.h"
#include "util/TextFile.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

using namespace nicer;
namespace fs = std::filesystem;

namespace {

/// A scratch directory is all a BOINC data directory needs to be here.
using Scratch = test::FakeBinDir;

std::string read(const fs::path& path) {
    auto text = readTextFile(path);
    REQUIRE(text.ok());
    return *text;
}

const char* kVolunteer = "<global_preferences>\n"
                         "   <cpu_usage_limit>50</cpu_usage_limit>\n"
                         "   <disk_max_used_gb>7</disk_max_used_gb>\n"
                         "</global_preferences>\n";

} // namespace

TEST_CASE("a fresh directory gets a private password and nicer's override, and 'none' is what comes back",
          "[ClientDirectory]") {
    const Scratch scratch;
    const auto dir = scratch.dir() / "boinc";
    REQUIRE(boinc::prepareClientDirectory(dir).ok());

    const auto password = read(dir / boinc::kPasswordFile);
    CHECK(password.size() == 33); // 32 hex digits and a newline, as the client writes its own
    struct stat st {};
    REQUIRE(::stat((dir / boinc::kPasswordFile).c_str(), &st) == 0);
    CHECK((st.st_mode & 0077) == 0); // nobody else may read it
    CHECK(boinc::hasNicerSettings(read(dir / boinc::kOverrideFile)));
    CHECK(read(dir / boinc::kSavedOverrideFile).empty());

    // A second start keeps the password.
    REQUIRE(boinc::prepareClientDirectory(dir).ok());
    CHECK(read(dir / boinc::kPasswordFile) == password);

    REQUIRE(boinc::restoreVolunteerOverride(dir).ok());
    CHECK_FALSE(fs::exists(dir / boinc::kOverrideFile));
    CHECK_FALSE(fs::exists(dir / boinc::kSavedOverrideFile));
    // Restoring twice is harmless.
    REQUIRE(boinc::restoreVolunteerOverride(dir).ok());
}

TEST_CASE("the volunteer's override is kept, once, even across a killed nicerd, and put back exactly",
          "[ClientDirectory]") {
    const Scratch scratch;
    const auto dir = scratch.dir();
    std::ofstream(dir / boinc::kOverrideFile) << kVolunteer;

    REQUIRE(boinc::prepareClientDirectory(dir).ok());
    const auto nicers = read(dir / boinc::kOverrideFile);
    CHECK(boinc::hasNicerSettings(nicers));
    CHECK_THAT(nicers, Catch::Contains("<disk_max_used_gb>7</disk_max_used_gb>")); // theirs stays
    CHECK(read(dir / boinc::kSavedOverrideFile) == kVolunteer);

    // nicerd was killed: the next start finds nicer's override in place and the saved copy, which wins.
    REQUIRE(boinc::prepareClientDirectory(dir).ok());
    CHECK(read(dir / boinc::kSavedOverrideFile) == kVolunteer);
    auto saved = boinc::savedVolunteerOverride(dir);
    REQUIRE(saved.ok());
    CHECK(*saved == kVolunteer);

    // The volunteer changes it while the client runs: that becomes what comes back.
    const std::string changed =
        "<global_preferences><disk_max_used_gb>9</disk_max_used_gb></global_preferences>";
    REQUIRE(boinc::rememberVolunteerOverride(dir, changed).ok());
    REQUIRE(boinc::restoreVolunteerOverride(dir).ok());
    CHECK(read(dir / boinc::kOverrideFile) == changed);
    CHECK_FALSE(fs::exists(dir / boinc::kSavedOverrideFile));
}

TEST_CASE("an override that is not XML stops the preparation, says what to do, and is left as it is",
          "[ClientDirectory]") {
    const Scratch scratch;
    const auto dir = scratch.dir();
    const std::string broken = "<global_preferences><cpu_usage_limit>50</cpu_usage";
    std::ofstream(dir / boinc::kOverrideFile) << broken;
    const auto prepared = boinc::prepareClientDirectory(dir);
    REQUIRE_FALSE(prepared.ok());
    CHECK_THAT(prepared.error().message, Catch::Contains((dir / boinc::kOverrideFile).string()) &&
                                             Catch::Contains("fix it or delete it"));
    CHECK(read(dir / boinc::kOverrideFile) == broken);
    CHECK_FALSE(fs::exists(dir / boinc::kSavedOverrideFile));
}

TEST_CASE("an enabled system-wide boinc-client.service is found by its link in a .wants folder",
          "[SystemService]") {
    const Scratch root;
    CHECK_FALSE(boinc::systemServiceEnabled(root.dir()));
    fs::create_directories(root.dir() / "etc/systemd/system/multi-user.target.wants");
    fs::create_directories(root.dir() / "lib/systemd/system");
    std::ofstream(root.dir() / "lib/systemd/system/boinc-client.service") << "[Service]\n";
    CHECK_FALSE(boinc::systemServiceEnabled(root.dir())); // installed but not enabled
    fs::create_symlink(root.dir() / "lib/systemd/system/boinc-client.service",
                       root.dir() / "etc/systemd/system/multi-user.target.wants/boinc-client.service");
    CHECK(boinc::systemServiceEnabled(root.dir()));
    CHECK_THAT(boinc::systemServiceAdvice(true, false),
               Catch::Contains("is enabled:") &&
                   Catch::Contains("sudo systemctl disable --now boinc-client.service"));
}

TEST_CASE("the system-wide client's advice says whether it is enabled or only running, and what to run",
          "[SystemService]") {
    CHECK(boinc::systemServiceAdvice(false, false).empty());
    CHECK_THAT(boinc::systemServiceAdvice(false, true),
               Catch::Contains("is running (started by hand, not enabled)") &&
                   Catch::Contains("run: sudo systemctl stop boinc-client.service"));
    CHECK_THAT(boinc::systemServiceAdvice(true, true),
               Catch::Contains("is enabled and running") &&
                   Catch::Contains("run: sudo systemctl disable --now boinc-client.service"));
}
