#include "net/FetcherTestSupport.h"
#include "net/fetch/PartFile.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace nicer;
using namespace nicer::net;
using nicer::test::readBytes;
using nicer::test::sha256Of;
using nicer::test::TempDir;
using nicer::test::writeFile;

namespace {

std::span<const std::uint8_t> bytes(const std::string& text) {
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

} // namespace

TEST_CASE("PartFile writes NAME.part in order and commits it to NAME", "[PartFile]") {
    TempDir dir;
    auto opened = PartFile::open(dir.path(), "sub/deeper/file.bin");
    REQUIRE(opened);
    PartFile& part = *opened;
    CHECK(std::filesystem::is_directory(dir.path() / "sub/deeper"));
    CHECK(*part.finalSize() == std::nullopt);
    CHECK(*part.existingPartSize() == std::nullopt);

    REQUIRE(*part.openPart() == 0);
    REQUIRE(part.append(bytes("hello ")));
    REQUIRE(part.append(bytes("world")));
    CHECK(part.size() == 11);
    CHECK(readBytes(dir.path() / "sub/deeper/file.bin.part") == "hello world");

    Sha256 hash;
    REQUIRE(part.hashPart(hash, 0, 6));
    REQUIRE(part.hashPart(hash, 6, 5));
    CHECK(hash.hexDigest() == sha256Of("hello world"));
    Sha256 tooLong;
    const auto past = part.hashPart(tooLong, 6, 6);
    REQUIRE_FALSE(past);
    CHECK_THAT(past.error().message, Catch::Contains("shorter than expected"));

    REQUIRE(part.commit());
    CHECK_FALSE(std::filesystem::exists(dir.path() / "sub/deeper/file.bin.part"));
    CHECK(readBytes(dir.path() / "sub/deeper/file.bin") == "hello world");
    CHECK(*part.finalSize() == 11u);
    auto final = part.openFinal();
    REQUIRE(final);
    Sha256 finalHash;
    REQUIRE(part.hashFinal(*final, finalHash, 0, 4));
    REQUIRE(part.hashFinal(*final, finalHash, 4, 7));
    CHECK(finalHash.hexDigest() == sha256Of("hello world"));
}

TEST_CASE("PartFile reopens an existing part at its end, truncates and discards", "[PartFile]") {
    TempDir dir;
    writeFile(dir.path() / "a.bin.part", "prefix");
    auto part = PartFile::open(dir.path(), "a.bin");
    REQUIRE(part);
    CHECK(*part->existingPartSize() == 6u);
    REQUIRE(*part->openPart() == 6);
    REQUIRE(part->append(bytes("+more")));
    CHECK(readBytes(dir.path() / "a.bin.part") == "prefix+more");
    REQUIRE(part->truncate());
    CHECK(part->size() == 0);
    CHECK(readBytes(dir.path() / "a.bin.part").empty());
    REQUIRE(part->discard());
    CHECK_FALSE(std::filesystem::exists(dir.path() / "a.bin.part"));
    REQUIRE(part->discard()); // nothing left to delete is fine
}

TEST_CASE("PartFile commit replaces an old file of the same name", "[PartFile]") {
    TempDir dir;
    writeFile(dir.path() / "a.bin", "old content");
    auto part = PartFile::open(dir.path(), "a.bin");
    REQUIRE(part);
    REQUIRE(part->openPart());
    REQUIRE(part->append(bytes("new")));
    CHECK(readBytes(dir.path() / "a.bin") == "old content"); // untouched until verified and committed
    REQUIRE(part->commit());
    CHECK(readBytes(dir.path() / "a.bin") == "new");
}

TEST_CASE("PartFile does not follow a symbolic link out of the directory", "[PartFile]") {
    TempDir dir;
    TempDir outside;
    writeFile(outside.path() / "victim", "keep me");

    SECTION("a linked subdirectory") {
        std::filesystem::create_directory_symlink(outside.path(), dir.path() / "link");
        const auto part = PartFile::open(dir.path(), "link/x.bin");
        REQUIRE_FALSE(part);
        CHECK_THAT(part.error().message, Catch::Contains("symbolic link") && Catch::Contains("move it away"));
        CHECK_FALSE(std::filesystem::exists(outside.path() / "x.bin.part"));
    }
    SECTION("a linked part file") {
        std::filesystem::create_symlink(outside.path() / "victim", dir.path() / "x.bin.part");
        auto part = PartFile::open(dir.path(), "x.bin");
        REQUIRE(part);
        CHECK_FALSE(part->existingPartSize()); // a link is not a part file
        const auto size = part->openPart();
        REQUIRE_FALSE(size);
        CHECK_THAT(size.error().message, Catch::Contains("symbolic link"));
        CHECK(readBytes(outside.path() / "victim") == "keep me");
    }
    SECTION("a linked final file") {
        std::filesystem::create_symlink(outside.path() / "victim", dir.path() / "x.bin");
        auto part = PartFile::open(dir.path(), "x.bin");
        REQUIRE(part);
        const auto size = part->finalSize();
        REQUIRE_FALSE(size);
        CHECK_THAT(size.error().message, Catch::Contains("not a regular file"));
    }
}
