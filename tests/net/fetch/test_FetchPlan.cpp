#include "net/fetch/FetchPlan.h"

#include <catch2/catch.hpp>

using namespace nicer;
using namespace nicer::net;

namespace {

MetalinkFile file(std::string name, std::vector<std::string> urls,
                  std::string sha256 = std::string(64, 'a')) {
    MetalinkFile f;
    f.name = std::move(name);
    f.size = 10;
    f.sha256 = std::move(sha256);
    for (auto& url : urls) {
        f.mirrors.push_back(Mirror{std::move(url)});
    }
    return f;
}

} // namespace

TEST_CASE("a valid manifest becomes a plan with targets below the directory and parsed mirrors") {
    auto plan = planFetch({file("a.bin", {"http://example.org/a.bin", "https://mirror.example.org/a.bin"}),
                           file("sub/b.bin", {"http://example.org/b.bin"})},
                          "/tmp/nicer-plan", {});
    REQUIRE(plan);
    CHECK(plan->dir == "/tmp/nicer-plan");
    REQUIRE(plan->files.size() == 2);
    CHECK(plan->files[0].target == "/tmp/nicer-plan/a.bin");
    CHECK(plan->files[1].target == "/tmp/nicer-plan/sub/b.bin");
    REQUIRE(plan->files[0].mirrors.size() == 2);
    CHECK(plan->files[0].mirrors[1].host == "mirror.example.org");
    CHECK(plan->files[0].file.name == "a.bin");
    CHECK(plan->anyTls);
}

TEST_CASE("a plan without https mirrors needs no TLS, a relative directory becomes absolute") {
    auto plan = planFetch({file("a.bin", {"http://example.org/a.bin"})}, "relative/dir", {});
    REQUIRE(plan);
    CHECK_FALSE(plan->anyTls);
    CHECK(plan->dir.is_absolute());
    CHECK(plan->dir.filename() == "dir");
}

TEST_CASE("the plan refuses what cannot be fetched, saying why") {
    const auto ok = file("a.bin", {"http://example.org/a.bin"});
    FetcherOptions options;

    SECTION("no files") {
        auto plan = planFetch({}, "/tmp/x", options);
        REQUIRE_FALSE(plan);
        CHECK_THAT(plan.error().message, Catch::Contains("lists no files"));
    }
    SECTION("no streams") {
        options.streams = 0;
        auto plan = planFetch({ok}, "/tmp/x", options);
        REQUIRE_FALSE(plan);
        CHECK_THAT(plan.error().message, Catch::Contains("streams"));
    }
    SECTION("no attempts") {
        options.attemptsPerMirror = 0;
        auto plan = planFetch({ok}, "/tmp/x", options);
        REQUIRE_FALSE(plan);
        CHECK_THAT(plan.error().message, Catch::Contains("attempts per mirror"));
    }
    SECTION("a rate of zero") {
        options.maxRate = 0.0;
        auto plan = planFetch({ok}, "/tmp/x", options);
        REQUIRE_FALSE(plan);
        CHECK_THAT(plan.error().message, Catch::Contains("maximum rate"));
    }
    SECTION("no directory") {
        auto plan = planFetch({ok}, "", options);
        REQUIRE_FALSE(plan);
        CHECK_THAT(plan.error().message, Catch::Contains("no download directory"));
    }
    SECTION("a name that leaves the directory") {
        auto plan = planFetch({file("../escape", {"http://example.org/a"})}, "/tmp/x", options);
        REQUIRE_FALSE(plan);
    }
    SECTION("a name twice") {
        auto plan = planFetch({ok, ok}, "/tmp/x", options);
        REQUIRE_FALSE(plan);
        CHECK_THAT(plan.error().message, Catch::Contains("appears twice"));
    }
    SECTION("a hash that is not SHA-256") {
        auto plan = planFetch({file("a.bin", {"http://example.org/a"}, "abc")}, "/tmp/x", options);
        REQUIRE_FALSE(plan);
        CHECK_THAT(plan.error().message, Catch::Contains("not 64 hex digits"));
    }
    SECTION("a URL that does not parse") {
        auto plan = planFetch({file("a.bin", {"ftp://example.org/a"})}, "/tmp/x", options);
        REQUIRE_FALSE(plan);
        CHECK_THAT(plan.error().message, Catch::Contains("file 'a.bin'"));
    }
    SECTION("no mirror") {
        auto plan = planFetch({file("a.bin", {})}, "/tmp/x", options);
        REQUIRE_FALSE(plan);
        CHECK_THAT(plan.error().message, Catch::Contains("no http:// or https:// URL"));
    }
}

TEST_CASE("an unverified file (no hash) is planned") {
    auto plan = planFetch({file("a.bin", {"http://example.org/a.bin"}, "")}, "/tmp/x", {});
    REQUIRE(plan);
    CHECK(plan->files[0].file.sha256.empty());
}
