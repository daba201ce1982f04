#include "net/fetch/DownloadSource.h"

#include <catch2/catch.hpp>

using namespace nicer::net;

namespace {

Url url(const char* text) {
    auto parsed = parseUrl(text);
    REQUIRE(parsed.ok());
    return *parsed;
}

} // namespace

TEST_CASE("a source is a URL only with http:// or https://", "[DownloadSource]") {
    CHECK(isHttpUrl("http://example.org/a.bin"));
    CHECK(isHttpUrl("https://example.org/units.meta4"));
    CHECK_FALSE(isHttpUrl("units.meta4"));
    CHECK_FALSE(isHttpUrl("/srv/http://example.org"));
    CHECK_FALSE(isHttpUrl("ftp://example.org/a.bin"));
}

TEST_CASE("a URL names a manifest by its path's ending, the query left out", "[DownloadSource]") {
    CHECK(namesManifest(url("https://example.org/units.meta4")));
    CHECK(namesManifest(url("https://example.org/units.metalink?v=2")));
    CHECK_FALSE(namesManifest(url("https://example.org/units.bin?f=x.meta4")));
    CHECK_FALSE(namesManifest(url("https://example.org/units.meta4.bin")));
}

TEST_CASE("a single file is named after the last component of the URL's path", "[DownloadSource]") {
    auto file = singleFileOf(url("https://example.org/units/extra.bin?v=2"));
    REQUIRE(file.ok());
    CHECK(file->name == "extra.bin");
    CHECK(file->sha256.empty());
    CHECK_FALSE(file->size);
    REQUIRE(file->mirrors.size() == 1);
    CHECK(file->mirrors[0].url == "https://example.org/units/extra.bin?v=2");

    auto directory = singleFileOf(url("http://example.org/units/"));
    REQUIRE_FALSE(directory.ok());
    CHECK_THAT(directory.error().message, Catch::Contains("http://example.org/units/") &&
                                              Catch::Contains("names no file") &&
                                              Catch::Contains("give the URL of the file itself"));
    CHECK_FALSE(singleFileOf(url("http://example.org/")).ok());
}
