#include "TempDir.h"
#include "util/TextFile.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace nicer;

namespace {

using test::TempDir;

} // namespace

TEST_CASE("readTextFile gives the whole file, bytes as they are", "[TextFile]") {
    const TempDir dir;
    const auto file = dir.path / "f.txt";
    std::string content(10000, 'x'); // more than one read(2)
    content += std::string("\0\n\xff end", 7);
    std::ofstream(file, std::ios::binary) << content;
    const auto read = readTextFile(file);
    REQUIRE(read.ok());
    CHECK(*read == content);

    std::ofstream(dir.path / "empty");
    const auto empty = readTextFile(dir.path / "empty");
    REQUIRE(empty.ok());
    CHECK(empty->empty());
}

TEST_CASE("readTextFile reads /proc files, whose size stat(2) reports as 0", "[TextFile]") {
    const auto stat = readTextFile("/proc/self/stat");
    REQUIRE(stat.ok());
    CHECK(stat->starts_with(std::to_string(getpid()) + " ("));
}

TEST_CASE("readTextFile says which file it could not open, and why", "[TextFile]") {
    const TempDir dir;
    const auto missing = dir.path / "missing";
    const auto result = readTextFile(missing);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().message == "cannot open " + missing.string() + ": No such file or directory");
}

TEST_CASE("readTextFile says it could not read a directory", "[TextFile]") {
    const TempDir dir;
    const auto result = readTextFile(dir.path);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().message == "cannot read " + dir.path.string() + ": Is a directory");
}

TEST_CASE("readTextFile stops at 16 MiB on a file without end", "[TextFile]") {
    const auto zeros = readTextFile("/dev/zero");
    REQUIRE(zeros.ok());
    CHECK(zeros->size() >= (1u << 24));
    CHECK(zeros->size() < (1u << 24) + 4096);
}
