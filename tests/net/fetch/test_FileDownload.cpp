#include "net/FetcherTestSupport.h"
#include "net/fetch/FileDownload.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <span>
#include <string>

using namespace nicer;
using namespace nicer::net;
using namespace std::chrono_literals;

namespace {

using Clock = FileDownload::Clock;
using Headers = Http2Session::Headers;

const Clock::time_point kNow = Clock::time_point(1h);

// A download of @p content into @p dir from the given mirrors, with a fixed jitter (backoff 150 ms, then
// 300 ms, ...).
FileDownload makeDownload(const std::filesystem::path& dir, const std::string& content,
                          std::vector<std::string> urls = {"http://a.example/f.bin"}, bool withHash = true) {
    MetalinkFile file;
    file.name = "f.bin";
    file.size = content.size();
    file.sha256 = withHash ? test::sha256Of(content) : std::string();
    std::vector<Url> mirrors;
    for (const auto& url : urls) {
        file.mirrors.push_back(Mirror{url});
        mirrors.push_back(*parseUrl(url));
    }
    return FileDownload(0, file, dir / "f.bin", mirrors, Backoff(200ms, 10s, [] { return 0.5; }),
                        FileDownload::Policy{dir, 2, 3});
}

std::span<const std::uint8_t> bytes(const std::string& text) {
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

std::optional<std::string> header(const Http2Session::Request& request, const std::string& name) {
    for (const auto& [key, value] : request.headers) {
        if (key == name) {
            return value;
        }
    }
    return std::nullopt;
}

// Sends the request of the next attempt (as stream 1).
Http2Session::Request begin(FileDownload& download) {
    auto request = download.nextRequest();
    REQUIRE(request);
    download.attemptStarted(nullptr, 1);
    return *request;
}

const StreamEnd kComplete{StreamEnd::Kind::Complete, 0};
const FileDownload::ConnectionFacts kUp{true, false, std::nullopt};

} // namespace

TEST_CASE("a download writes the body, verifies it and puts the file in place") {
    test::TempDir dir;
    const std::string content = test::randomBytes(5000, 1);
    auto download = makeDownload(dir.path(), content);
    CHECK(download.report.path == dir.path() / "f.bin");
    CHECK(download.remaining() == 5000);

    const auto request = begin(download);
    CHECK(request.scheme == "http");
    CHECK(request.authority == "a.example");
    CHECK(request.path == "/f.bin");
    CHECK_FALSE(header(request, "range"));
    CHECK(download.state() == FileState::Active);
    CHECK(download.report.attempts == 1);

    CHECK(download.onHeaders(200, {{"content-length", "5000"}}) == FileDownload::AfterHeaders::Write);
    CHECK(download.onData(bytes(content.substr(0, 3000))) == FileDownload::AfterData::Pace);
    CHECK(download.onData(bytes(content.substr(3000))) == FileDownload::AfterData::Pace);
    CHECK(download.report.bytesDone == 5000);
    CHECK(download.report.bytesDownloaded == 5000);
    download.acknowledged(4000);
    CHECK(download.unacknowledged() == 1000);

    CHECK(download.onClosed(kComplete, kUp, kNow) == FileDownload::Outcome::Done);
    CHECK(download.state() == FileState::Ok);
    CHECK(download.report.mirrorUsed == "http://a.example/f.bin");
    CHECK(test::readBytes(dir.path() / "f.bin") == content);
    CHECK(test::partFiles(dir.path()).empty());
}

TEST_CASE("a broken attempt keeps its prefix, waits out the backoff and resumes with a Range request") {
    test::TempDir dir;
    const std::string content = test::randomBytes(4000, 2);
    auto download = makeDownload(dir.path(), content);
    begin(download);
    REQUIRE(download.onHeaders(200, {{"content-length", "4000"}}) == FileDownload::AfterHeaders::Write);
    REQUIRE(download.onData(bytes(content.substr(0, 1500))) == FileDownload::AfterData::Pace);

    const StreamEnd lost{StreamEnd::Kind::ConnectionClosed, 0};
    CHECK(download.onClosed(lost, {true, false, "the server hung up"}, kNow) ==
          FileDownload::Outcome::Continue);
    CHECK(download.state() == FileState::Waiting);
    CHECK(download.readyAt == kNow + 150ms); // equal jitter: half the 200 ms base, plus 0.5 of the rest
    CHECK(download.report.error == "http://a.example/f.bin: the server hung up");
    CHECK(download.counters.retries == 1);
    CHECK(test::readBytes(dir.path() / "f.bin.part") == content.substr(0, 1500));

    const auto request = begin(download);
    CHECK(header(request, "range") == "bytes=1500-");
    CHECK(download.report.attempts == 2);
    CHECK(download.report.resumedFrom == 0); // the first request of this run started at 0
    CHECK(download.onHeaders(206, {{"content-length", "2500"}, {"content-range", "bytes 1500-3999/4000"}}) ==
          FileDownload::AfterHeaders::Write);
    CHECK(download.onData(bytes(content.substr(1500))) == FileDownload::AfterData::Pace);
    CHECK(download.onClosed(kComplete, kUp, kNow) == FileDownload::Outcome::Done);
    CHECK(test::readBytes(dir.path() / "f.bin") == content);
}

TEST_CASE("a server that ignores Range restarts the part file") {
    test::TempDir dir;
    const std::string content = test::randomBytes(3000, 3);
    auto download = makeDownload(dir.path(), content);
    begin(download);
    REQUIRE(download.onHeaders(200, {}) == FileDownload::AfterHeaders::Write);
    REQUIRE(download.onData(bytes(content.substr(0, 1000))) == FileDownload::AfterData::Pace);
    REQUIRE(download.onClosed({StreamEnd::Kind::ResetByPeer, 2}, kUp, kNow) ==
            FileDownload::Outcome::Continue);

    CHECK(header(begin(download), "range") == "bytes=1000-");
    CHECK(download.onHeaders(200, {{"content-length", "3000"}}) == FileDownload::AfterHeaders::Write);
    CHECK(download.counters.rangeIgnored == 1);
    CHECK(download.offset == 0);
    CHECK(download.onData(bytes(content)) == FileDownload::AfterData::Pace);
    CHECK(download.onClosed(kComplete, kUp, kNow) == FileDownload::Outcome::Done);
    CHECK(test::readBytes(dir.path() / "f.bin") == content);
}

TEST_CASE("a body that does not hash to the manifest's SHA-256 is discarded and retried") {
    test::TempDir dir;
    const std::string content = test::randomBytes(2000, 4);
    auto download = makeDownload(dir.path(), content);
    begin(download);
    REQUIRE(download.onHeaders(200, {{"content-length", "2000"}}) == FileDownload::AfterHeaders::Write);
    REQUIRE(download.onData(bytes(test::randomBytes(2000, 5))) == FileDownload::AfterData::Pace);
    CHECK(download.onClosed(kComplete, kUp, kNow) == FileDownload::Outcome::Continue);
    CHECK(download.state() == FileState::Waiting);
    CHECK(download.counters.hashMismatches == 1);
    CHECK_THAT(download.report.error, Catch::Contains("SHA-256 mismatch"));
    CHECK(download.offset == 0);
    CHECK(test::partFiles(dir.path()).empty());
    CHECK_FALSE(std::filesystem::exists(dir.path() / "f.bin"));
}

TEST_CASE("an unverified file is only checked for its length, and its digest is reported") {
    test::TempDir dir;
    const std::string content = test::randomBytes(1000, 6);
    auto download = makeDownload(dir.path(), content, {"http://a.example/f.bin"}, false);
    begin(download);
    REQUIRE(download.onHeaders(200, {}) == FileDownload::AfterHeaders::Write);
    REQUIRE(download.onData(bytes(content.substr(0, 999))) == FileDownload::AfterData::Pace);
    CHECK(download.onClosed(kComplete, kUp, kNow) == FileDownload::Outcome::Continue);
    CHECK_THAT(download.report.error, Catch::Contains("ended after 999 of 1000 bytes"));

    begin(download);
    REQUIRE(download.onHeaders(206, {{"content-range", "bytes 999-999/1000"}}) ==
            FileDownload::AfterHeaders::Write);
    REQUIRE(download.onData(bytes(content.substr(999))) == FileDownload::AfterData::Pace);
    CHECK(download.onClosed(kComplete, kUp, kNow) == FileDownload::Outcome::Done);
    CHECK(download.report.sha256 == test::sha256Of(content));
    CHECK_FALSE(download.report.verified);
}

TEST_CASE("more body than announced resets the stream and discards the bytes") {
    test::TempDir dir;
    const std::string content = test::randomBytes(1000, 7);
    auto download = makeDownload(dir.path(), content);
    begin(download);
    REQUIRE(download.onHeaders(200, {{"content-length", "1000"}}) == FileDownload::AfterHeaders::Write);
    CHECK(download.onData(bytes(content + "extra")) == FileDownload::AfterData::ResetAndDiscard);
    CHECK(download.onData(bytes("late")) == FileDownload::AfterData::Discard);
    CHECK(download.onClosed({StreamEnd::Kind::Cancelled, 8}, kUp, kNow) == FileDownload::Outcome::Continue);
    CHECK_THAT(download.report.error, Catch::Contains("more than the 1000 bytes it announced"));
    CHECK(download.state() == FileState::Waiting);
}

TEST_CASE("503 with Retry-After waits as long as the server asks") {
    test::TempDir dir;
    auto download = makeDownload(dir.path(), "abc");
    begin(download);
    CHECK(download.onHeaders(503, {{"retry-after", "7"}}) == FileDownload::AfterHeaders::Reset);
    CHECK(download.mode == FileDownload::Mode::Failing);
    CHECK(download.onClosed({StreamEnd::Kind::Cancelled, 8}, kUp, kNow) == FileDownload::Outcome::Continue);
    CHECK(download.state() == FileState::Waiting);
    CHECK(download.readyAt == kNow + 7s);
}

TEST_CASE("a redirect is followed at once without counting an attempt, https never goes to http") {
    test::TempDir dir;
    auto download = makeDownload(dir.path(), "abc", {"https://a.example/f.bin", "https://b.example/f.bin"});
    begin(download);
    CHECK(download.onHeaders(302, {{"location", "https://cdn.example/x/f.bin"}}) ==
          FileDownload::AfterHeaders::Reset);
    CHECK(download.onClosed({StreamEnd::Kind::Cancelled, 8}, kUp, kNow) == FileDownload::Outcome::Continue);
    CHECK(download.state() == FileState::Queued);
    CHECK(download.counters.redirects == 1);
    CHECK(download.url().toString() == "https://cdn.example/x/f.bin");
    const auto request = begin(download);
    CHECK(request.authority == "cdn.example");
    CHECK(download.report.attempts == 1);

    CHECK(download.onHeaders(301, {{"location", "http://plain.example/f.bin"}}) ==
          FileDownload::AfterHeaders::Reset);
    CHECK(download.onClosed({StreamEnd::Kind::Cancelled, 8}, kUp, kNow) == FileDownload::Outcome::Continue);
    CHECK_THAT(download.report.error, Catch::Contains("from https to http is not followed"));
    CHECK(download.url().host == "b.example"); // the next mirror
}

TEST_CASE("404 on the last mirror fails the file, attempts per mirror move on to the next one") {
    test::TempDir dir;
    auto download = makeDownload(dir.path(), "abc", {"http://a.example/f.bin", "http://b.example/f.bin"});
    // Two failed attempts (the policy's limit) on the first mirror.
    for (int i = 0; i < 2; ++i) {
        begin(download);
        REQUIRE(download.onHeaders(500, {}) == FileDownload::AfterHeaders::Reset);
        REQUIRE(download.onClosed({StreamEnd::Kind::Cancelled, 8}, kUp, kNow) ==
                FileDownload::Outcome::Continue);
    }
    CHECK(download.state() == FileState::Queued);
    CHECK(download.mirror == 1);
    begin(download);
    REQUIRE(download.onHeaders(404, {}) == FileDownload::AfterHeaders::Reset);
    CHECK(download.onClosed({StreamEnd::Kind::Cancelled, 8}, kUp, kNow) == FileDownload::Outcome::Done);
    CHECK(download.state() == FileState::Failed);
    CHECK_THAT(download.report.error, Catch::Contains("all 2 mirrors failed"));
}

TEST_CASE("a request the server never processed is repeated for free, a few times in a row") {
    test::TempDir dir;
    auto download = makeDownload(dir.path(), "abc");
    const StreamEnd goAway{StreamEnd::Kind::NotProcessed, 0};
    for (int i = 0; i < 3; ++i) {
        begin(download);
        REQUIRE(download.onClosed(goAway, kUp, kNow) == FileDownload::Outcome::Continue);
        CHECK(download.state() == FileState::Queued);
    }
    CHECK(download.attemptsOnMirror == 0);
    begin(download); // the fourth in a row counts
    CHECK(download.onClosed(goAway, kUp, kNow) == FileDownload::Outcome::Continue);
    CHECK(download.state() == FileState::Waiting);
    CHECK(download.attemptsOnMirror == 1);
}

TEST_CASE("a server that cannot be verified is given up at once") {
    test::TempDir dir;
    auto download = makeDownload(dir.path(), "abc");
    begin(download);
    const FileDownload::ConnectionFacts tlsFailed{false, true, "certificate verify failed"};
    CHECK(download.onClosed({StreamEnd::Kind::NotProcessed, 0}, tlsFailed, kNow) ==
          FileDownload::Outcome::Done);
    CHECK(download.state() == FileState::Failed);
    CHECK_THAT(download.report.error, Catch::Contains("certificate verify failed"));
}

TEST_CASE("cancel keeps the part file and ends an unfinished file Cancelled") {
    test::TempDir dir;
    const std::string content = test::randomBytes(100, 8);
    auto download = makeDownload(dir.path(), content);
    begin(download);
    REQUIRE(download.onHeaders(200, {}) == FileDownload::AfterHeaders::Write);
    REQUIRE(download.onData(bytes(content.substr(0, 40))) == FileDownload::AfterData::Pace);
    download.cancel();
    CHECK(download.state() == FileState::Cancelled);
    CHECK(test::readBytes(dir.path() / "f.bin.part") == content.substr(0, 40));
}
