// The whole fetcher against a hostile HTTP/2 server (issue 12): MisbehavingH2Server resetting every stream,
// flooding, sending endless CONTINUATION frames, huge or malformed headers, DATA after END_STREAM, windows
// beyond 2^31-1, more DATA than the window, a trickle, or nothing at all. Each test asserts what the client
// does about it: the file fails with a clear error after its attempts (counted, with a backoff counted
// through the jitter source, never timed) or completes intact, the other files are unharmed, and no byte the
// server had no right to send ends up in a file. The frame-level details (memory, what nghttp2 does with each
// frame) are in tests/net/http2/test_Http2Session.cpp.

#include "net/FetcherTestSupport.h"
#include "net/MisbehavingH2Server.h"
#include "net/RawFrames.h"
#include "net/fetch/Fetcher.h"

#include <catch2/catch.hpp>
#include <nghttp2/nghttp2.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

using namespace nicer;
using namespace nicer::net;
using namespace nicer::net::test;
using namespace nicer::test;
using namespace std::chrono_literals;

namespace {

MetalinkFile oneFile(const std::string& name, const std::string& content, const std::string& url) {
    MetalinkFile file;
    file.name = name;
    file.size = content.size();
    file.sha256 = sha256Of(content);
    file.mirrors.push_back(Mirror{url, 1});
    return file;
}

/// quickOptions() with 3 attempts per mirror, whose jitter source counts the backoff waits.
FetcherOptions countingOptions(int& waits) {
    auto options = quickOptions();
    options.attemptsPerMirror = 3;
    options.uniform01 = [&waits] {
        ++waits;
        return 0.5;
    };
    return options;
}

std::size_t requestsFor(const MisbehavingH2Server& server, const std::string& path) {
    std::size_t n = 0;
    for (const auto& request : server.requests()) {
        n += request.path == path;
    }
    return n;
}

MisbehavingH2Server::Behaviour rawAnswer(std::function<std::string(std::int32_t)> frames) {
    MisbehavingH2Server::Behaviour behaviour;
    behaviour.raw = std::move(frames);
    return behaviour;
}

/// A response in hand-written frames: HEADERS (:status 200, @p extra fields) and @p body in DATA frames.
std::string response(std::int32_t stream, const std::string& body, const std::string& extra = {}) {
    std::string frames = rawFrame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, stream, kStatus200 + extra);
    for (std::size_t at = 0; at < body.size(); at += 16000) {
        const bool last = at + 16000 >= body.size();
        frames += rawFrame(NGHTTP2_DATA, last ? NGHTTP2_FLAG_END_STREAM : 0, stream, body.substr(at, 16000));
    }
    return frames;
}

} // namespace

TEST_CASE("hostile server: streams reset as soon as they open fail their file after its attempts with "
          "backoff, and the other files complete",
          "[fetcher][hostile]") {
    MisbehavingH2Server server;
    const std::string content = randomBytes(200'000, 1);
    server.serve("/good.bin", MisbehavingH2Server::Behaviour::plain(content));
    std::vector<MetalinkFile> files{oneFile("good.bin", content, server.url("/good.bin"))};
    const std::vector<std::pair<std::string, std::uint32_t>> codes{{"internal", NGHTTP2_INTERNAL_ERROR},
                                                                   {"cancel", NGHTTP2_CANCEL},
                                                                   {"no-error", NGHTTP2_NO_ERROR},
                                                                   {"refused", NGHTTP2_REFUSED_STREAM}};
    for (const auto& [name, code] : codes) {
        MisbehavingH2Server::Behaviour reset;
        reset.body = content;
        reset.refuse = true;
        reset.refuseCode = code;
        server.serve("/" + name + ".bin", reset);
        files.push_back(oneFile(name + ".bin", content, server.url("/" + name + ".bin")));
    }
    TempDir dir;
    int waits = 0;
    const auto report = fetchAll(files, dir.path(), countingOptions(waits));

    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK(readBytes(dir.path() / "good.bin") == content);
    for (std::size_t i = 0; i < codes.size(); ++i) {
        const auto& [name, code] = codes[i];
        const auto& file = report.files[i + 1];
        CAPTURE(name);
        CHECK(file.state == FileState::Failed);
        CHECK_THAT(file.error, Catch::Contains(std::string("reset by the server (") +
                                               nghttp2_http2_strerror(code) + ")"));
        // REFUSED_STREAM says the server did nothing: 10 free retries in a row, then it counts like the rest.
        const int attempts = code == NGHTTP2_REFUSED_STREAM ? 10 + 3 : 3;
        CHECK(file.attempts == attempts);
        CHECK(requestsFor(server, "/" + name + ".bin") == static_cast<std::size_t>(attempts));
        CHECK_FALSE(std::filesystem::exists(dir.path() / (name + ".bin")));
    }
    // Each failing file waited twice (before its second and third counted attempt), and every stream opened
    // is one of those attempts: nothing was asked in a loop.
    CHECK(waits == 2 * 4);
    CHECK(report.totals.streamsOpened == 1 + 3 * 3 + 13);
    // Resets end streams, not the connection.
    CHECK(report.totals.connectionsOpened == 1);
    CHECK(server.connectionsAccepted() == 1);
}

TEST_CASE("hostile server: a PING or SETTINGS flood on every connection fails the file with a clear error, "
          "one connection per attempt",
          "[fetcher][hostile]") {
    const bool ping = GENERATE(true, false);
    CAPTURE(ping);
    MisbehavingH2Server server;
    const std::string frame =
        ping ? rawFrame(NGHTTP2_PING, 0, 0, "12345678") : rawFrame(NGHTTP2_SETTINGS, 0, 0, "");
    server.greet(MisbehavingH2Server::Greeting::Normal, repeat(frame, 1000));
    const std::string content = randomBytes(10'000, 2);
    server.serve("/f.bin", MisbehavingH2Server::Behaviour::plain(content));
    TempDir dir;
    int waits = 0;
    const auto report =
        fetchAll({oneFile("f.bin", content, server.url("/f.bin"))}, dir.path(), countingOptions(waits));
    CHECK(report.files[0].state == FileState::Failed);
    CHECK_THAT(report.files[0].error, Catch::Contains("Flooding was detected in this HTTP/2 session"));
    CHECK(report.files[0].attempts == 3);
    CHECK(server.connectionsAccepted() == 3);
    CHECK(waits == 2);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "f.bin"));
}

TEST_CASE("hostile server: endless CONTINUATION frames fail the file with a clear error, a file from another "
          "server completes",
          "[fetcher][hostile]") {
    MisbehavingH2Server hostile;
    MisbehavingH2Server other;
    hostile.serve("/c.bin", rawAnswer([](std::int32_t stream) {
                      // 900 kB of CONTINUATION frames, never END_HEADERS.
                      return rawFrame(NGHTTP2_HEADERS, 0, stream, kStatus200) +
                             repeat(rawFrame(NGHTTP2_CONTINUATION, 0, stream, ""), 100'000);
                  }));
    const std::string content = randomBytes(100'000, 3);
    other.serve("/ok.bin", MisbehavingH2Server::Behaviour::plain(content));
    TempDir dir;
    int waits = 0;
    const auto report = fetchAll(
        {oneFile("c.bin", content, hostile.url("/c.bin")), oneFile("ok.bin", content, other.url("/ok.bin"))},
        dir.path(), countingOptions(waits));
    CHECK(report.files[0].state == FileState::Failed);
    CHECK_THAT(report.files[0].error,
               Catch::Contains("Too many CONTINUATION frames following a HEADER frame"));
    CHECK(report.files[0].attempts == 3);
    CHECK(hostile.connectionsAccepted() == 3);
    CHECK(waits == 2);
    REQUIRE(report.files[1].state == FileState::Ok);
    CHECK(readBytes(dir.path() / "ok.bin") == content);
    CHECK(other.connectionsAccepted() == 1);
}

TEST_CASE("hostile server: huge or malformed response headers fail only their file", "[fetcher][hostile]") {
    // A 1 MiB header value is a connection error (HPACK takes at most 64 KiB per field): its own server.
    MisbehavingH2Server huge;
    huge.serve("/huge.bin", rawAnswer([](std::int32_t stream) {
                   const std::string block = kStatus200 + literal("x-huge", std::string(1 << 20, 'h'));
                   std::string frames = rawFrame(NGHTTP2_HEADERS, 0, stream, block.substr(0, 16384));
                   for (std::size_t at = 16384; at < block.size(); at += 16384) {
                       frames += rawFrame(NGHTTP2_CONTINUATION,
                                          at + 16384 >= block.size() ? NGHTTP2_FLAG_END_HEADERS : 0, stream,
                                          block.substr(at, 16384));
                   }
                   return frames;
               }));
    // The others end only their stream, next to a good file on the same connection.
    MisbehavingH2Server server;
    const std::string content = randomBytes(50'000, 4);
    server.serve("/many.bin", rawAnswer([&content](std::int32_t stream) {
                     // 10000 fields of one byte each ("accept-encoding: gzip, deflate", static index 16).
                     return response(stream, content, std::string(10'000, '\x90'));
                 }));
    server.serve("/upper.bin", rawAnswer([&content](std::int32_t stream) {
                     return response(stream, content, literal("X-Upper", "v"));
                 }));
    server.serve("/connection.bin", rawAnswer([&content](std::int32_t stream) {
                     return response(stream, content, literal("connection", "close"));
                 }));
    server.serve("/fine.bin", MisbehavingH2Server::Behaviour::plain(content));
    std::vector<MetalinkFile> files{oneFile("huge.bin", content, huge.url("/huge.bin"))};
    for (const std::string name : {"many", "upper", "connection", "fine"}) {
        files.push_back(oneFile(name + ".bin", content, server.url("/" + name + ".bin")));
    }
    TempDir dir;
    int waits = 0;
    const auto report = fetchAll(files, dir.path(), countingOptions(waits));

    const std::vector<std::string> expected{"COMPRESSION_ERROR",
                                            "response headers too large, stream reset (CANCEL)",
                                            "malformed response, stream reset (PROTOCOL_ERROR)",
                                            "malformed response, stream reset (PROTOCOL_ERROR)"};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        CAPTURE(files[i].name);
        CHECK(report.files[i].state == FileState::Failed);
        CHECK_THAT(report.files[i].error, Catch::Contains(expected[i]));
        CHECK(report.files[i].attempts == 3);
        CHECK_FALSE(std::filesystem::exists(dir.path() / files[i].name));
    }
    REQUIRE(report.files[4].state == FileState::Ok);
    CHECK(readBytes(dir.path() / "fine.bin") == content);
    CHECK(waits == 2 * 4);
    CHECK(huge.connectionsAccepted() == 3);
    CHECK(server.connectionsAccepted() == 1);
}

TEST_CASE("hostile server: DATA after END_STREAM never reaches the file", "[fetcher][hostile]") {
    MisbehavingH2Server server;
    const std::string content = randomBytes(50'000, 5);
    server.serve("/after.bin", rawAnswer([&content](std::int32_t stream) {
                     return response(stream, content,
                                     literal("content-length", std::to_string(content.size()))) +
                            repeat(rawFrame(NGHTTP2_DATA, 0, stream, std::string(16000, 'X')), 8) +
                            rawFrame(NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, stream, "trailing");
                 }));
    const std::string second = randomBytes(30'000, 6);
    server.serve("/second.bin", MisbehavingH2Server::Behaviour::plain(second));
    TempDir dir;
    auto options = quickOptions();
    options.streams = 1; // the second file's stream after the late DATA, on the same connection
    const auto report = fetchAll({oneFile("after.bin", content, server.url("/after.bin")),
                                  oneFile("second.bin", second, server.url("/second.bin"))},
                                 dir.path(), options);
    REQUIRE(report.files[0].state == FileState::Ok);
    CHECK(report.files[0].attempts == 1);
    CHECK(readBytes(dir.path() / "after.bin") == content);
    REQUIRE(report.files[1].state == FileState::Ok);
    CHECK(readBytes(dir.path() / "second.bin") == second);
    CHECK(server.connectionsAccepted() == 1);
}

TEST_CASE("hostile server: a window overflow fails the stream or the connection, no byte past the window "
          "written",
          "[fetcher][hostile]") {
    MisbehavingH2Server server;
    const std::string content = randomBytes(300'000, 7);
    TempDir dir;
    int waits = 0;
    auto options = countingOptions(waits);

    SECTION("WINDOW_UPDATE beyond 2^31-1 on the stream: the stream is reset") {
        server.serve("/w.bin", rawAnswer([](std::int32_t stream) {
                         return rawFrame(NGHTTP2_WINDOW_UPDATE, 0, stream, u32(0x7fffffff));
                     }));
        const auto report = fetchAll({oneFile("w.bin", content, server.url("/w.bin"))}, dir.path(), options);
        CHECK(report.files[0].state == FileState::Failed);
        CHECK_THAT(report.files[0].error,
                   Catch::Contains("malformed response, stream reset (FLOW_CONTROL_ERROR)"));
        CHECK(report.files[0].attempts == 3);
        CHECK(server.connectionsAccepted() == 1);
    }
    SECTION("WINDOW_UPDATE beyond 2^31-1 on the connection: the connection fails") {
        server.serve("/w.bin", rawAnswer([](std::int32_t) {
                         return rawFrame(NGHTTP2_WINDOW_UPDATE, 0, 0, u32(0x7fffffff));
                     }));
        const auto report = fetchAll({oneFile("w.bin", content, server.url("/w.bin"))}, dir.path(), options);
        CHECK(report.files[0].state == FileState::Failed);
        CHECK_THAT(report.files[0].error, Catch::Contains("the server broke the HTTP/2 protocol") &&
                                              Catch::Contains("FLOW_CONTROL_ERROR"));
        CHECK(report.files[0].attempts == 3);
        CHECK(server.connectionsAccepted() == 3);
    }
    SECTION("more DATA than the window: only what the window allowed is in the part file") {
        // A rate limit makes the client hold bytes back, so its 64 KiB windows stay closed; the server
        // sends 160 kB at once, every time from the start (a 200 to every Range).
        server.serve("/w.bin", rawAnswer([&content](std::int32_t stream) {
                         return response(stream, content.substr(0, 160'000));
                     }));
        options.maxRate = 1000;
        const auto report = fetchAll({oneFile("w.bin", content, server.url("/w.bin"))}, dir.path(), options);
        CHECK(report.files[0].state == FileState::Failed);
        CHECK_THAT(report.files[0].error, Catch::Contains("FLOW_CONTROL_ERROR"));
        CHECK(report.files[0].attempts == 3);
        const auto part = dir.path() / "w.bin.part";
        REQUIRE(std::filesystem::exists(part));
        const std::string kept = readBytes(part);
        CHECK(kept.size() <= 65536);
        CHECK(kept == content.substr(0, kept.size()));
    }
    CHECK(waits == 2);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "w.bin"));
}

TEST_CASE("hostile server: a trickle below the minimum rate fails the file as too slow instead of hanging",
          "[fetcher][hostile]") {
    MisbehavingH2Server server;
    const std::string content = randomBytes(300'000, 8);
    MisbehavingH2Server::Behaviour trickle;
    trickle.body = content;
    trickle.trickleAfter = 1000;
    trickle.trickleEvery = 10ms; // far more often than the stall timeout: the stall check alone never fires
    server.serve("/t.bin", trickle);
    TempDir dir;
    int waits = 0;
    auto options = countingOptions(waits);
    options.attemptsPerMirror = 2;
    options.stallTimeout = 1s;
    options.minRate = 100'000;
    const auto report = fetchAll({oneFile("t.bin", content, server.url("/t.bin"))}, dir.path(), options);
    CHECK(report.files[0].state == FileState::Failed);
    CHECK_THAT(report.files[0].error,
               Catch::Contains("below the minimum of 100000 bytes/s: the server is too slow"));
    CHECK(report.files[0].attempts == 2);
    CHECK(server.connectionsAccepted() == 2);
    CHECK(waits == 1);
    // The second attempt resumed from what the first kept, and all that was kept is the file's prefix.
    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[1].range.starts_with("bytes="));
    const std::string kept = readBytes(dir.path() / "t.bin.part");
    CHECK(kept.size() >= 2000);
    CHECK(kept == content.substr(0, kept.size()));
    CHECK_FALSE(std::filesystem::exists(dir.path() / "t.bin"));
}

TEST_CASE("hostile server: a server that never answers the connection is timed out with a clear error and "
          "retried later",
          "[fetcher][hostile]") {
    MisbehavingH2Server server;
    const std::string content = randomBytes(10'000, 9);
    TempDir dir;
    int waits = 0;
    auto options = countingOptions(waits);
    options.attemptsPerMirror = 2;
    options.stallTimeout = 300ms;
    options.connectTimeout = 300ms;
    std::string url = server.url("/n.bin");
    std::string expected;

    SECTION("TCP accepted, not a byte said") {
        server.greet(MisbehavingH2Server::Greeting::Silent);
        expected = "no HTTP/2 SETTINGS from 127.0.0.1:" + std::to_string(server.port()) +
                   " in 0.3 s after connecting";
    }
    SECTION("its SETTINGS sent, ours never acknowledged") {
        server.greet(MisbehavingH2Server::Greeting::SettingsOnly);
        expected = "did not acknowledge the HTTP/2 SETTINGS in 0.3 s (SETTINGS_TIMEOUT)";
    }
    SECTION("TLS: the handshake never answered") {
        server.greet(MisbehavingH2Server::Greeting::Silent);
        url = "https://127.0.0.1:" + std::to_string(server.port()) + "/n.bin";
        expected =
            "TLS handshake with 127.0.0.1:" + std::to_string(server.port()) + " did not finish within 0.3 s";
    }
    const auto report = fetchAll({oneFile("n.bin", content, url)}, dir.path(), options);
    CHECK(report.files[0].state == FileState::Failed);
    CHECK_THAT(report.files[0].error, Catch::Contains(expected));
    CHECK(report.files[0].attempts == 2);
    CHECK(server.connectionsAccepted() == 2);
    CHECK(waits == 1);
    CHECK(server.requests().empty());
}
