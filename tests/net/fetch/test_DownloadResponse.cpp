#include "net/fetch/DownloadResponse.h"

#include <catch2/catch.hpp>

#include <string>

using namespace nicer::net;

namespace {

ResponseFacts facts(int status, std::optional<std::uint64_t> length = std::nullopt,
                    std::optional<std::string> range = std::nullopt) {
    return ResponseFacts{status, length, std::move(range), std::nullopt};
}

} // namespace

TEST_CASE("200 to a request from the start: write the body from byte 0", "[DownloadResponse]") {
    const auto v = judgeResponse(facts(200, 1000), 0, 1000);
    CHECK(v.action == ResponseAction::Write);
    CHECK(v.bodyOffset == 0);
    CHECK(v.bodyLength == 1000u);
    CHECK(v.fileSize == 1000u);

    // No Content-Length and no size in the manifest: nothing to hold the body to yet.
    const auto open = judgeResponse(facts(200), 0, std::nullopt);
    CHECK(open.action == ResponseAction::Write);
    CHECK_FALSE(open.bodyLength);
}

TEST_CASE("200 to a range request: the server ignored Range, start over", "[DownloadResponse]") {
    const auto v = judgeResponse(facts(200, 1000), 400, 1000);
    CHECK(v.action == ResponseAction::Restart);
    CHECK(v.bodyOffset == 0);
    CHECK_THAT(v.reason, Catch::Contains("ignored the range request"));
}

TEST_CASE("200 whose length contradicts the manifest is refused", "[DownloadResponse]") {
    const auto v = judgeResponse(facts(200, 999), 0, 1000);
    CHECK(v.action == ResponseAction::Retry);
    CHECK_THAT(v.reason, Catch::Contains("999") && Catch::Contains("manifest says 1000"));
}

TEST_CASE("206 is accepted only when it continues the part file to the end", "[DownloadResponse]") {
    const auto ok = judgeResponse(facts(206, 600, "bytes 400-999/1000"), 400, 1000);
    CHECK(ok.action == ResponseAction::Write);
    CHECK(ok.bodyOffset == 400);
    CHECK(ok.bodyLength == 600u);
    CHECK(ok.fileSize == 1000u);

    // An unknown total is fine when the range runs to the manifest's end.
    CHECK(judgeResponse(facts(206, std::nullopt, "bytes 400-999/*"), 400, 1000).action ==
          ResponseAction::Write);
    // ... and with no size anywhere, the range itself is the best we know.
    CHECK(judgeResponse(facts(206, std::nullopt, "bytes 400-999/*"), 400, std::nullopt).action ==
          ResponseAction::Write);

    const auto wrongStart = judgeResponse(facts(206, 700, "bytes 300-999/1000"), 400, 1000);
    CHECK(wrongStart.action == ResponseAction::Retry);
    CHECK_THAT(wrongStart.reason, Catch::Contains("from 300") && Catch::Contains("from 400"));

    const auto otherFile = judgeResponse(facts(206, 600, "bytes 400-1999/2000"), 400, 1000);
    CHECK(otherFile.action == ResponseAction::Retry);
    CHECK_THAT(otherFile.reason, Catch::Contains("2000") && Catch::Contains("manifest says 1000"));

    const auto shortRange = judgeResponse(facts(206, 100, "bytes 400-499/1000"), 400, 1000);
    CHECK(shortRange.action == ResponseAction::Retry);
    CHECK_THAT(shortRange.reason, Catch::Contains("ends at byte 999"));

    const auto lengthDisagrees = judgeResponse(facts(206, 599, "bytes 400-999/1000"), 400, 1000);
    CHECK(lengthDisagrees.action == ResponseAction::Retry);
    CHECK_THAT(lengthDisagrees.reason, Catch::Contains("disagrees"));

    CHECK(judgeResponse(facts(206, 600), 400, 1000).action == ResponseAction::Retry);
    CHECK(judgeResponse(facts(206, 600, "bytes */1000"), 400, 1000).action == ResponseAction::Retry);
    CHECK(judgeResponse(facts(206, 600, "garbage"), 400, 1000).action == ResponseAction::Retry);
}

TEST_CASE("416 for a whole part file means verify it, for a longer one, discard it", "[DownloadResponse]") {
    const auto whole = judgeResponse(facts(416, std::nullopt, "bytes */1000"), 1000, 1000);
    CHECK(whole.action == ResponseAction::Verify);
    CHECK(judgeResponse(facts(416, std::nullopt, "bytes */1000"), 1000, std::nullopt).action ==
          ResponseAction::Verify);

    const auto longer = judgeResponse(facts(416, std::nullopt, "bytes */800"), 1000, std::nullopt);
    CHECK(longer.action == ResponseAction::Discard);
    CHECK_THAT(longer.reason, Catch::Contains("longer than the server's file"));

    // The server's file is longer than the part, yet it refuses the range: nothing to conclude.
    CHECK(judgeResponse(facts(416, std::nullopt, "bytes */2000"), 1000, 2000).action ==
          ResponseAction::Retry);
    // The manifest's size differs from what the part holds: not a verify.
    CHECK(judgeResponse(facts(416, std::nullopt, "bytes */1000"), 1000, 1200).action !=
          ResponseAction::Verify);
    CHECK(judgeResponse(facts(416), 0, 1000).action == ResponseAction::Retry);
}

TEST_CASE("Statuses: transient ones are retried, the rest go to the next mirror", "[DownloadResponse]") {
    for (const int status : {408, 429, 500, 502, 503, 504}) {
        INFO(status);
        CHECK(judgeResponse(facts(status), 0, 1000).action == ResponseAction::Retry);
    }
    for (const int status : {400, 401, 403, 404, 410, 451, 204}) {
        INFO(status);
        CHECK(judgeResponse(facts(status), 0, 1000).action == ResponseAction::NextMirror);
    }
    CHECK_THAT(judgeResponse(facts(404), 0, 1000).reason, Catch::Contains("404 Not Found"));
}

TEST_CASE("Redirects with a Location are followed, the others go to the next mirror", "[DownloadResponse]") {
    for (const int status : {301, 302, 303, 307, 308}) {
        INFO(status);
        auto response = facts(status);
        response.location = " /mirror/unit.bin ";
        const auto v = judgeResponse(response, 400, 1000);
        CHECK(v.action == ResponseAction::Redirect);
        CHECK(v.location == "/mirror/unit.bin");
        CHECK_THAT(v.reason, Catch::Contains(std::to_string(status)));
    }
    const auto nowhere = judgeResponse(facts(302), 0, 1000);
    CHECK(nowhere.action == ResponseAction::NextMirror);
    CHECK_THAT(nowhere.reason, Catch::Contains("no Location header"));
    // 300 Multiple Choices and 305 Use Proxy name no single target to follow.
    for (const int status : {300, 304, 305}) {
        INFO(status);
        auto response = facts(status);
        response.location = "/elsewhere";
        const auto v = judgeResponse(response, 0, 1000);
        CHECK(v.action == ResponseAction::NextMirror);
        CHECK_THAT(v.reason, Catch::Contains("put the final URL in the manifest"));
    }
}

TEST_CASE("Unsatisfied ranges and range headers", "[DownloadResponse]") {
    CHECK(parseUnsatisfiedRange("bytes */1000") == 1000u);
    CHECK(parseUnsatisfiedRange(" bytes */0 ") == 0u);
    CHECK_FALSE(parseUnsatisfiedRange("bytes 0-1/2"));
    CHECK_FALSE(parseUnsatisfiedRange("bytes */"));
    CHECK_FALSE(parseUnsatisfiedRange("bytes */-1"));
    CHECK(rangeFrom(0) == "bytes=0-");
    CHECK(rangeFrom(123456789012ull) == "bytes=123456789012-");
}
