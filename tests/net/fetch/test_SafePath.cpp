#include "net/fetch/SafePath.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace nicer::net;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = "/srv/downloads";

/// True when @p path is @p dir or below it, compared component by component.
bool isInside(const fs::path& dir, const fs::path& path) {
    const auto normal = path.lexically_normal();
    const auto [dirEnd, pathEnd] = std::mismatch(dir.begin(), dir.end(), normal.begin(), normal.end());
    return dirEnd == dir.end() &&
           std::none_of(normal.begin(), normal.end(), [](const fs::path& part) { return part == ".."; });
}

std::string rejected(std::string_view name) {
    const auto path = safeTargetPath(kDir, name);
    INFO("name: " << std::string(name));
    if (path.ok()) {
        FAIL_CHECK("accepted as " << path->string());
        return {};
    }
    return path.error().message;
}

} // namespace

TEST_CASE("safeTargetPath puts plain names and subdirectories below the directory", "[SafePath]") {
    CHECK(safeTargetPath(kDir, "unit1.bin").value() == kDir / "unit1.bin");
    CHECK(safeTargetPath(kDir, "a/b.dat").value() == kDir / "a" / "b.dat");
    CHECK(safeTargetPath(kDir, "deep/er/still/file").value() ==
          fs::path("/srv/downloads/deep/er/still/file"));
    CHECK(safeTargetPath("rel/dir", "x.bin").value() == fs::path("rel/dir/x.bin"));
    // The directory itself is normalised too.
    CHECK(safeTargetPath("/srv//downloads/./", "x").value() == fs::path("/srv/downloads/x"));
    // Dots inside names, and names that merely start with dots, are ordinary files.
    CHECK(safeTargetPath(kDir, "...").value() == kDir / "...");
    CHECK(safeTargetPath(kDir, ".hidden").value() == kDir / ".hidden");
    CHECK(safeTargetPath(kDir, "a..b/..c").value() == kDir / "a..b" / "..c");
    CHECK(safeTargetPath(kDir, "name with spaces & caf\xc3\xa9").value() ==
          kDir / "name with spaces & caf\xc3\xa9");
    CHECK(safeTargetPath(kDir, "unit.part2").value() == kDir / "unit.part2");
}

TEST_CASE("safeTargetPath takes names literally, so percent escapes are not traversals", "[SafePath]") {
    // Manifest names are not URLs: nothing decodes %2e%2e into "..", so this is a directory named "%2e%2e".
    const auto path = safeTargetPath(kDir, "%2e%2e/x");
    REQUIRE(path.ok());
    CHECK(*path == kDir / "%2e%2e" / "x");
    CHECK(isInside(kDir, *path));
}

TEST_CASE("safeTargetPath refuses every way out of the directory", "[SafePath]") {
    const auto name =
        GENERATE(as<std::string>{}, "..", "../x", "a/../../x", "a/..", "a/b/../../../etc/passwd",
                 "/etc/passwd", "/", "//x", ".", "./x", "a/./b", "a/.", "x\\..\\y", "..\\x", "C:\\Windows\\x",
                 "a//b", "a/", "/..", "../../../../../../etc/shadow");
    const auto path = safeTargetPath(kDir, name);
    INFO("name: " << name);
    CHECK_FALSE(path.ok());
    // Even if a rule were dropped, whatever comes back must stay inside.
    if (path.ok()) {
        CHECK(isInside(kDir, *path));
    }
}

TEST_CASE("safeTargetPath says what is wrong with a name", "[SafePath]") {
    CHECK_THAT(rejected(""), Catch::Contains("empty"));
    CHECK_THAT(rejected("/etc/passwd"), Catch::Contains("absolute") && Catch::Contains("'/etc/passwd'"));
    CHECK_THAT(rejected("../x"), Catch::Contains("'..'"));
    CHECK_THAT(rejected("a/./b"), Catch::Contains("'.'"));
    CHECK_THAT(rejected("a//b"), Catch::Contains("empty path component"));
    CHECK_THAT(rejected("dir/"), Catch::Contains("empty path component"));
    CHECK_THAT(rejected("x\\..\\y"), Catch::Contains("backslash") && Catch::Contains("'/'"));
}

TEST_CASE("safeTargetPath refuses NUL and control characters and escapes them in the message", "[SafePath]") {
    const auto withNul = rejected(std::string("a\0b", 3));
    CHECK_THAT(withNul, Catch::Contains("control character") && Catch::Contains("a\\x00b"));
    CHECK_THAT(rejected("a\nb"), Catch::Contains("a\\x0ab"));
    CHECK_THAT(rejected("tab\there"), Catch::Contains("control character"));
    CHECK_THAT(rejected("del\x7f"), Catch::Contains("\\x7f"));
    CHECK_THAT(rejected("esc\x1b[31m"), Catch::Contains("\\x1b"));
}

TEST_CASE("safeTargetPath refuses the suffix reserved for partial downloads in any component", "[SafePath]") {
    CHECK_THAT(rejected("unit.part"), Catch::Contains(".part"));
    CHECK_THAT(rejected("a.part/b"), Catch::Contains(".part"));
    CHECK_THAT(rejected(".part"), Catch::Contains(".part"));
    CHECK_THAT(rejected("dir/x.bin.part"), Catch::Contains("reserved"));
}

TEST_CASE("safeTargetPath limits component length so that the partial file name still fits", "[SafePath]") {
    const std::string dir255(255, 'd');
    const std::string dir256(256, 'd');
    const std::string file250(250, 'f');
    const std::string file251(251, 'f');

    CHECK(safeTargetPath(kDir, dir255 + "/" + file250).ok());
    CHECK(partialPath(safeTargetPath(kDir, file250).value()).filename().string().size() == 255);
    CHECK_THAT(rejected(dir256 + "/f"), Catch::Contains("256 bytes") && Catch::Contains("at most 255"));
    CHECK_THAT(rejected(file251), Catch::Contains("251 bytes") && Catch::Contains("at most 250"));
    CHECK_THAT(rejected("d/" + file251), Catch::Contains(".part"));
}

TEST_CASE("partialPath appends the reserved suffix to the file name", "[SafePath]") {
    CHECK(partialPath("/srv/downloads/a/b.dat") == fs::path("/srv/downloads/a/b.dat.part"));
    CHECK(partialPath("x") == fs::path("x.part"));
    CHECK(std::string(kPartialSuffix) == ".part");
}
