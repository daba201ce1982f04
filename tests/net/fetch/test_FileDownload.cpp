#include "net/FetcherTestSupport.h"
#include "net/InMemoryH2Server.h"
#include "net/fetch/FileDownload.h"
#include "net/fetch/FlowPacer.h"

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
    file.sha256 = withHash ? nicer::test::sha256Of(content) : std::string();
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
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(5000, 1);
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
    CHECK(nicer::test::readBytes(dir.path() / "f.bin") == content);
    CHECK(nicer::test::partFiles(dir.path()).empty());
}

TEST_CASE("a broken attempt keeps its prefix, waits out the backoff and resumes with a Range request") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(4000, 2);
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
    CHECK(nicer::test::readBytes(dir.path() / "f.bin.part") == content.substr(0, 1500));

    const auto request = begin(download);
    CHECK(header(request, "range") == "bytes=1500-");
    CHECK(download.report.attempts == 2);
    CHECK(download.report.resumedFrom == 0); // the first request of this run started at 0
    CHECK(download.onHeaders(206, {{"content-length", "2500"}, {"content-range", "bytes 1500-3999/4000"}}) ==
          FileDownload::AfterHeaders::Write);
    CHECK(download.onData(bytes(content.substr(1500))) == FileDownload::AfterData::Pace);
    CHECK(download.onClosed(kComplete, kUp, kNow) == FileDownload::Outcome::Done);
    CHECK(nicer::test::readBytes(dir.path() / "f.bin") == content);
}

TEST_CASE("a server that ignores Range restarts the part file") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(3000, 3);
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
    CHECK(nicer::test::readBytes(dir.path() / "f.bin") == content);
}

TEST_CASE("a body that does not hash to the manifest's SHA-256 is discarded and retried") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(2000, 4);
    auto download = makeDownload(dir.path(), content);
    begin(download);
    REQUIRE(download.onHeaders(200, {{"content-length", "2000"}}) == FileDownload::AfterHeaders::Write);
    REQUIRE(download.onData(bytes(nicer::test::randomBytes(2000, 5))) == FileDownload::AfterData::Pace);
    CHECK(download.onClosed(kComplete, kUp, kNow) == FileDownload::Outcome::Continue);
    CHECK(download.state() == FileState::Waiting);
    CHECK(download.counters.hashMismatches == 1);
    CHECK_THAT(download.report.error, Catch::Contains("SHA-256 mismatch"));
    CHECK(download.offset == 0);
    CHECK(nicer::test::partFiles(dir.path()).empty());
    CHECK_FALSE(std::filesystem::exists(dir.path() / "f.bin"));
}

TEST_CASE("an unverified file is only checked for its length, and its digest is reported") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(1000, 6);
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
    CHECK(download.report.sha256 == nicer::test::sha256Of(content));
    CHECK_FALSE(download.report.verified);
}

TEST_CASE("more body than announced resets the stream and discards the bytes") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(1000, 7);
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
    nicer::test::TempDir dir;
    auto download = makeDownload(dir.path(), "abc");
    begin(download);
    CHECK(download.onHeaders(503, {{"retry-after", "7"}}) == FileDownload::AfterHeaders::Reset);
    CHECK(download.mode == FileDownload::Mode::Failing);
    CHECK(download.onClosed({StreamEnd::Kind::Cancelled, 8}, kUp, kNow) == FileDownload::Outcome::Continue);
    CHECK(download.state() == FileState::Waiting);
    CHECK(download.readyAt == kNow + 7s);
}

TEST_CASE("a redirect is followed at once without counting an attempt, https never goes to http") {
    nicer::test::TempDir dir;
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
    nicer::test::TempDir dir;
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
    nicer::test::TempDir dir;
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
    nicer::test::TempDir dir;
    auto download = makeDownload(dir.path(), "abc");
    begin(download);
    const FileDownload::ConnectionFacts tlsFailed{false, true, "certificate verify failed"};
    CHECK(download.onClosed({StreamEnd::Kind::NotProcessed, 0}, tlsFailed, kNow) ==
          FileDownload::Outcome::Done);
    CHECK(download.state() == FileState::Failed);
    CHECK_THAT(download.report.error, Catch::Contains("certificate verify failed"));
}

TEST_CASE("cancel keeps the part file and ends an unfinished file Cancelled") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(100, 8);
    auto download = makeDownload(dir.path(), content);
    begin(download);
    REQUIRE(download.onHeaders(200, {}) == FileDownload::AfterHeaders::Write);
    REQUIRE(download.onData(bytes(content.substr(0, 40))) == FileDownload::AfterData::Pace);
    download.cancel();
    CHECK(download.state() == FileState::Cancelled);
    CHECK(nicer::test::readBytes(dir.path() / "f.bin.part") == content.substr(0, 40));
}

// ---- Over the I/O-free session and the in-memory server, paced by a FlowPacer on a fake clock ----

namespace {

// What the Fetcher does with FileDownload's decisions, for one stream, without sockets.
struct MemoryWiring : Http2Session::Listener {
    FileDownload& download;
    FlowPacer& pacer;
    Http2Session* session = nullptr;
    std::optional<StreamEnd> end;

    MemoryWiring(FileDownload& d, FlowPacer& p)
        : download(d)
        , pacer(p) {}

    void onResponseHeaders(std::int32_t stream, int status, const Headers& headers) override {
        if (download.onHeaders(status, headers) == FileDownload::AfterHeaders::Reset) {
            session->resetStream(stream);
        }
    }
    void onData(std::int32_t stream, std::span<const std::uint8_t> data) override {
        pacer.received(data.size());
        switch (download.onData(data)) {
        case FileDownload::AfterData::Pace:
            download.acknowledged(session->consume(stream, pacer.take(session->unconsumed(stream))));
            return;
        case FileDownload::AfterData::ResetAndDiscard:
            session->resetStream(stream);
            [[fallthrough]];
        case FileDownload::AfterData::Discard:
            pacer.charge(data.size());
            download.acknowledged(session->consume(stream, data.size()));
            return;
        case FileDownload::AfterData::Reset:
            session->resetStream(stream);
            return;
        }
    }
    void onStreamClosed(std::int32_t, StreamEnd streamEnd) override { end = streamEnd; }
};

// Shuttles bytes between @p client and @p server until both are quiet.
void pump(Http2Session& client, nicer::net::test::InMemoryH2Server& server) {
    for (int round = 0; round < 100000; ++round) {
        bool moved = false;
        if (const auto out = client.output(); !out.empty()) {
            REQUIRE(server.receive(out));
            client.drainOutput(out.size());
            moved = true;
        }
        if (const std::string in = server.takeOutput(); !in.empty()) {
            REQUIRE(client.receive(bytes(in)));
            moved = true;
        }
        if (!moved) {
            return;
        }
    }
    FAIL("the client and the server never went quiet");
}

} // namespace

TEST_CASE("a download over the I/O-free session keeps to the FlowPacer's rate") {
    nicer::test::TempDir dir;
    const std::string content = nicer::test::randomBytes(500'000, 9);
    auto download = makeDownload(dir.path(), content);
    using Server = nicer::net::test::InMemoryH2Server;
    Server server([&](const Server::Request&) -> std::optional<Server::Response> {
        Server::Response response;
        response.headers = {{"content-length", std::to_string(content.size())}};
        response.body = content;
        return response;
    });

    FlowPacer::Clock::time_point now(1h);
    FetcherOptions options;
    options.maxRate = 1e6; // 1 MB/s: half a second for the file
    FlowPacer pacer(options, [&] { return now; });
    pacer.start();
    MemoryWiring wiring(download, pacer);
    auto session = Http2Session::create(wiring, pacer.sessionOptions());
    REQUIRE(session);
    wiring.session = session->get();

    const auto request = download.nextRequest();
    REQUIRE(request);
    const auto stream = (*session)->submitGet(*request);
    REQUIRE(stream);
    download.attemptStarted(nullptr, *stream);
    const auto start = now;
    pump(**session, server);
    while (!wiring.end && now - start < 10s) {
        now += options.pacingInterval;
        const auto shares = pacer.share({(*session)->unconsumed(*stream)});
        download.acknowledged((*session)->consume(*stream, shares[0]));
        pump(**session, server);
    }
    REQUIRE(wiring.end);
    const auto took = std::chrono::duration<double>(now - start).count();
    CHECK(took >= 0.4);
    CHECK(took <= 0.7);
    CHECK(download.onClosed(*wiring.end, kUp, now) == FileDownload::Outcome::Done);
    CHECK(nicer::test::readBytes(dir.path() / "f.bin") == content);
}
