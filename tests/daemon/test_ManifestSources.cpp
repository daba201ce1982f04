#include "daemon/ManifestSources.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using nicer::daemon::readDownloadSources;

namespace {

const std::string kData = NICER_TEST_DATA "/metalink/";

/// A Metalink listing one file called @p name, written to a scratch file.
std::string manifestWith(const std::string& name) {
    const auto path =
        std::filesystem::temp_directory_path() / ("nicer-test-manifest-" + std::to_string(::getpid()) + "-" +
                                                  std::to_string(std::hash<std::string>{}(name)) + ".meta4");
    std::ofstream(path) << "<?xml version=\"1.0\"?>\n<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">\n"
                           "<file name=\""
                        << name
                        << "\"><hash type=\"sha-256\">"
                           "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad</hash>"
                           "<url>http://example.org/x</url></file>\n</metalink>\n";
    return path.string();
}

} // namespace

TEST_CASE("Metalink files and single URLs make one list, in order", "[ManifestSources]") {
    auto files = readDownloadSources({kData + "valid.meta4", "https://example.org/units/extra.bin?v=2"});
    REQUIRE(files.ok());
    REQUIRE(files->size() == 4);
    CHECK((*files)[0].name == "units/unit-small.bin");
    CHECK((*files)[0].sha256.size() == 64);
    const auto& single = (*files)[3];
    CHECK(single.name == "extra.bin");
    CHECK(single.sha256.empty()); // nothing to verify a plain URL against
    CHECK_FALSE(single.size);
    REQUIRE(single.mirrors.size() == 1);
    CHECK(single.mirrors[0].url == "https://example.org/units/extra.bin?v=2");
    CHECK(readDownloadSources({})->empty());
}

TEST_CASE("a bad source is refused with its name and what to do", "[ManifestSources]") {
    auto missing = readDownloadSources({"/nonexistent/units.meta4"});
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(missing.error().message, Catch::Contains("/nonexistent/units.meta4"));

    auto truncated = readDownloadSources({kData + "truncated.meta4"});
    REQUIRE_FALSE(truncated.ok());
    CHECK_THAT(truncated.error().message, Catch::Contains("truncated.meta4"));
    CHECK_THAT(truncated.error().message, Catch::Contains("not well-formed"));

    auto directory = readDownloadSources({"http://example.org/units/"});
    REQUIRE_FALSE(directory.ok());
    CHECK_THAT(directory.error().message, Catch::Contains("names no file"));

    auto remote = readDownloadSources({"https://example.org/units.meta4"});
    REQUIRE_FALSE(remote.ok());
    CHECK_THAT(remote.error().message, Catch::Contains("from files, not URLs"));

    auto badUrl = readDownloadSources({"http://exa mple.org/x.bin"});
    REQUIRE_FALSE(badUrl.ok());
    CHECK_THAT(badUrl.error().message, Catch::Contains("manifest http://exa mple.org/x.bin"));
}

TEST_CASE("a name two sources list, or one that leaves the directory, is refused", "[ManifestSources]") {
    auto twice = readDownloadSources({kData + "valid.meta4", "http://example.org/unit-large.bin"});
    REQUIRE_FALSE(twice.ok());
    CHECK_THAT(twice.error().message, Catch::Contains("'unit-large.bin' is also listed by"));
    CHECK_THAT(twice.error().message, Catch::Contains("valid.meta4"));

    const auto escaping = manifestWith("../outside.bin");
    auto unsafe = readDownloadSources({escaping});
    std::filesystem::remove(escaping);
    REQUIRE_FALSE(unsafe.ok());
    CHECK_THAT(unsafe.error().message, Catch::Contains(escaping));
    CHECK_THAT(unsafe.error().message, Catch::Contains("../outside.bin"));
}
