// FetcherConnection against the tiny in-process HTTP/2 server (MisbehavingH2Server: nghttp2 on a loopback
// socket in a thread of the test). The I/O-free InMemoryH2Server cannot carry it: FetcherConnection owns a
// real TCP Connection, so it needs a socket at the other end, but no server from outside the test.

#include "EventLoop.h"
#include "libsystemd/Event.h"
#include "net/MisbehavingH2Server.h"
#include "net/fetch/FetcherConnection.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace nicer;
using namespace nicer::net;
using namespace std::chrono_literals;

namespace {

// Records what the connection reports.
struct Recorder : FetcherConnection::Owner {
    std::map<std::int32_t, int> status;
    std::map<std::int32_t, std::string> body;
    std::map<std::int32_t, StreamEnd> ends;
    std::vector<std::chrono::nanoseconds> rtts;
    int changes = 0;
    bool consumeAll = true;

    void onResponseHeaders(FetcherConnection&, std::int32_t stream, int code,
                           const Http2Session::Headers&) override {
        status[stream] = code;
    }
    void onData(FetcherConnection& connection, std::int32_t stream,
                std::span<const std::uint8_t> data) override {
        body[stream].append(reinterpret_cast<const char*>(data.data()), data.size());
        if (consumeAll) {
            connection.consume(stream, data.size());
        }
    }
    void onStreamClosed(FetcherConnection&, std::int32_t stream, StreamEnd end) override {
        ends[stream] = end;
    }
    void onPingAck(FetcherConnection&, std::chrono::nanoseconds rtt) override { rtts.push_back(rtt); }
    void onConnectionChanged(FetcherConnection&) override { ++changes; }
};

std::unique_ptr<FetcherConnection> openTo(sd_event* event, const std::string& url, Recorder& owner,
                                          Http2Session::Options session = {}) {
    auto parsed = parseUrl(url);
    REQUIRE(parsed);
    ConnectionOptions options;
    options.connectTimeout = 5s;
    auto opened = FetcherConnection::open(event, *parsed, nullptr, owner, session, options);
    REQUIRE(opened);
    return std::move(*opened);
}

Http2Session::Request get(const net::test::MisbehavingH2Server& server, const std::string& path) {
    const auto url = parseUrl(server.url(path));
    REQUIRE(url);
    Http2Session::Request request;
    request.scheme = url->scheme;
    request.authority = url->authority();
    request.path = url->path;
    return request;
}

std::string bytesOf(std::size_t n) {
    std::string text(n, '\0');
    for (std::size_t i = 0; i < n; ++i) {
        text[i] = static_cast<char>('a' + i % 26);
    }
    return text;
}

} // namespace

TEST_CASE("a fetcher connection carries several streams to one origin") {
    net::test::MisbehavingH2Server server;
    server.serve("/a", net::test::MisbehavingH2Server::Behaviour::plain(bytesOf(100'000)));
    server.serve("/b", net::test::MisbehavingH2Server::Behaviour::plain("small"));
    auto loop = nicer::test::newLoop();
    Recorder owner;
    auto connection = openTo(loop.get(), server.url("/"), owner);
    CHECK(connection->origin() ==
          "http://127.0.0.1:" + std::to_string(server.port()) + ":" + std::to_string(server.port()));
    CHECK(connection->acceptsRequests());

    const auto a = connection->submit(get(server, "/a"));
    const auto b = connection->submit(get(server, "/b"));
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return owner.ends.size() == 2; }));
    CHECK(connection->everConnected());
    CHECK(owner.changes >= 1); // connected
    CHECK(owner.status[*a] == 200);
    CHECK(owner.body[*a] == bytesOf(100'000));
    CHECK(owner.body[*b] == "small");
    CHECK(owner.ends[*a].kind == StreamEnd::Kind::Complete);
    CHECK(connection->activeStreams() == 0);
    CHECK(server.connectionsAccepted() == 1);
    CHECK_FALSE(connection->error());
}

TEST_CASE("with manual flow control the server sends only what was acknowledged") {
    net::test::MisbehavingH2Server server;
    server.serve("/big", net::test::MisbehavingH2Server::Behaviour::plain(bytesOf(400'000)));
    auto loop = nicer::test::newLoop();
    Recorder owner;
    owner.consumeAll = false;
    Http2Session::Options session;
    session.manualFlowControl = true;
    session.connectionWindow = 64 * 1024;
    session.streamWindow = 64 * 1024;
    auto connection = openTo(loop.get(), server.url("/"), owner, session);
    const auto stream = connection->submit(get(server, "/big"));
    REQUIRE(stream);

    REQUIRE(
        nicer::test::runLoopUntil(loop.get(), [&] { return connection->unconsumed(*stream) == 64 * 1024; }));
    // Nothing more comes while the window is used up.
    for (int i = 0; i < 20; ++i) {
        sd_event_run(loop.get(), 5'000);
    }
    CHECK(owner.body[*stream].size() == 64 * 1024);
    CHECK(connection->unconsumedTotal() == 64 * 1024);

    // Acknowledging lets the rest through.
    owner.consumeAll = true;
    CHECK(connection->consume(*stream, 64 * 1024) == 64 * 1024);
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return owner.ends.count(*stream) == 1; }));
    CHECK(owner.body[*stream] == bytesOf(400'000));
}

TEST_CASE("a stream reset by us ends Cancelled and the connection goes on") {
    net::test::MisbehavingH2Server server;
    auto stall = net::test::MisbehavingH2Server::Behaviour::plain(bytesOf(50'000));
    stall.stallAfter = 1000;
    server.serve("/stall", stall);
    server.serve("/ok", net::test::MisbehavingH2Server::Behaviour::plain("fine"));
    auto loop = nicer::test::newLoop();
    Recorder owner;
    auto connection = openTo(loop.get(), server.url("/"), owner);
    const auto stalled = connection->submit(get(server, "/stall"));
    REQUIRE(stalled);
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return owner.body[*stalled].size() == 1000; }));
    connection->resetStream(*stalled);
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return owner.ends.count(*stalled) == 1; }));
    CHECK(owner.ends[*stalled].kind == StreamEnd::Kind::Cancelled);

    const auto ok = connection->submit(get(server, "/ok"));
    REQUIRE(ok);
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return owner.ends.count(*ok) == 1; }));
    CHECK(owner.body[*ok] == "fine");
}

TEST_CASE("a server that stalls with window to send fails the connection") {
    net::test::MisbehavingH2Server server;
    auto stall = net::test::MisbehavingH2Server::Behaviour::plain(bytesOf(50'000));
    stall.stallAfter = 1000;
    server.serve("/stall", stall);
    auto loop = nicer::test::newLoop();
    Recorder owner;
    auto connection = openTo(loop.get(), server.url("/"), owner);
    const auto stream = connection->submit(get(server, "/stall"));
    REQUIRE(stream);
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return owner.body[*stream].size() == 1000; }));

    const auto now = std::chrono::steady_clock::now();
    connection->checkStall(now, 1h);
    CHECK_FALSE(connection->error());
    connection->checkStall(now + 2h, 1h);
    REQUIRE(nicer::test::runLoopUntil(
        loop.get(), [&] { return owner.ends.count(*stream) == 1 && connection->closed(); }));
    REQUIRE(connection->error());
    CHECK_THAT(connection->error()->message, Catch::Contains("the server stalled"));
    CHECK_FALSE(connection->failedPermanently());
    CHECK_FALSE(connection->acceptsRequests());
}

TEST_CASE("GOAWAY stops new requests on the connection, and the streams it cut do not end Complete") {
    net::test::MisbehavingH2Server server;
    auto away = net::test::MisbehavingH2Server::Behaviour::plain(bytesOf(50'000));
    away.goAwayAfter = 1000;
    away.times = 1;
    server.serve("/away", away);
    auto loop = nicer::test::newLoop();
    Recorder owner;
    auto connection = openTo(loop.get(), server.url("/"), owner);
    const auto stream = connection->submit(get(server, "/away"));
    REQUIRE(stream);
    REQUIRE(nicer::test::runLoopUntil(
        loop.get(), [&] { return owner.ends.count(*stream) == 1 && connection->closed(); }));
    CHECK(connection->goAwayReceived());
    CHECK_FALSE(connection->acceptsRequests());
    CHECK(owner.ends[*stream].kind != StreamEnd::Kind::Complete);
    CHECK_FALSE(connection->submit(get(server, "/away")));
}

TEST_CASE("a PING comes back with a round-trip time") {
    net::test::MisbehavingH2Server server;
    auto loop = nicer::test::newLoop();
    Recorder owner;
    auto connection = openTo(loop.get(), server.url("/"), owner);
    connection->ping(); // not connected yet: nothing is sent
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return connection->everConnected(); }));
    connection->ping();
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return owner.rtts.size() == 1; }));
    CHECK(owner.rtts[0] > 0ns);
}

TEST_CASE("a connection that cannot be made ends its streams, not permanently failed") {
    std::uint16_t port = 0;
    {
        net::test::MisbehavingH2Server server; // a port that was free a moment ago, and is closed now
        port = server.port();
    }
    auto loop = nicer::test::newLoop();
    Recorder owner;
    auto connection = openTo(loop.get(), "http://127.0.0.1:" + std::to_string(port) + "/", owner);
    Http2Session::Request request;
    request.scheme = "http";
    request.authority = "127.0.0.1:" + std::to_string(port);
    request.path = "/x";
    const auto stream = connection->submit(request);
    REQUIRE(stream);
    REQUIRE(nicer::test::runLoopUntil(
        loop.get(), [&] { return owner.ends.count(*stream) == 1 && connection->closed(); }));
    CHECK_FALSE(connection->everConnected());
    CHECK_FALSE(connection->failedPermanently());
    REQUIRE(connection->error());
    CHECK_THAT(connection->error()->message, Catch::Contains("127.0.0.1"));
}

TEST_CASE("fail() ends the connection with the reason given") {
    net::test::MisbehavingH2Server server;
    server.serve("/a", net::test::MisbehavingH2Server::Behaviour::plain(bytesOf(10)));
    auto loop = nicer::test::newLoop();
    Recorder owner;
    auto connection = openTo(loop.get(), server.url("/"), owner);
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return connection->everConnected(); }));
    connection->fail(Error{"the download was cancelled"});
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return connection->closed(); }));
    REQUIRE(connection->error());
    CHECK(connection->error()->message == "the download was cancelled");
}

TEST_CASE(
    "hostile server: a trickle below the minimum rate is dropped as too slow, which a stall check alone "
    "never does") {
    net::test::MisbehavingH2Server server;
    auto trickle = net::test::MisbehavingH2Server::Behaviour::plain(bytesOf(1'000'000));
    trickle.trickleAfter = 1000;
    trickle.trickleEvery = 5ms;
    server.serve("/trickle", trickle);
    auto loop = nicer::test::newLoop();
    Recorder owner;
    auto connection = openTo(loop.get(), server.url("/"), owner);
    const auto stream = connection->submit(get(server, "/trickle"));
    REQUIRE(stream);
    std::size_t seen = 0;
    const auto moreBytes = [&] {
        REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] { return owner.body[*stream].size() > seen; }));
        seen = owner.body[*stream].size();
    };
    // The connection takes its time from these calls only: checks ten minutes apart, with a byte or more
    // between any two, so the stall clock (an hour) never runs out.
    const auto start = std::chrono::steady_clock::now();
    SECTION("with a minimum of 10 bytes/s, the first whole hour gives it away") {
        for (int minute = 0; minute < 60; minute += 10) {
            moreBytes();
            connection->checkStall(start + std::chrono::minutes(minute), 1h, 10.0);
            REQUIRE_FALSE(connection->error());
        }
        moreBytes();
        connection->checkStall(start + 1h, 1h, 10.0);
        REQUIRE(nicer::test::runLoopUntil(
            loop.get(), [&] { return owner.ends.count(*stream) == 1 && connection->closed(); }));
        REQUIRE(connection->error());
        CHECK_THAT(connection->error()->message,
                   Catch::Contains("in 3600 s while downloading, below the minimum of 10 bytes/s") &&
                       Catch::Contains("the server is too slow"));
        CHECK(owner.ends[*stream].kind == StreamEnd::Kind::ConnectionClosed);
        CHECK_FALSE(connection->failedPermanently());
    }
    SECTION("without a minimum, ten hours go by") {
        for (int minute = 0; minute <= 600; minute += 10) {
            moreBytes();
            connection->checkStall(start + std::chrono::minutes(minute), 1h, 0.0);
            REQUIRE_FALSE(connection->error());
        }
        CHECK_FALSE(connection->closed());
    }
}

TEST_CASE("hostile server: a server that never sends its SETTINGS, or never acknowledges ours, is named when "
          "it stalls") {
    using Greeting = net::test::MisbehavingH2Server::Greeting;
    const auto greeting = GENERATE(Greeting::Silent, Greeting::SettingsOnly);
    CAPTURE(greeting == Greeting::Silent);
    net::test::MisbehavingH2Server server;
    server.greet(greeting);
    auto loop = nicer::test::newLoop();
    Recorder owner;
    auto connection = openTo(loop.get(), server.url("/"), owner);
    const auto stream = connection->submit(get(server, "/x"));
    REQUIRE(stream);
    // Connected, and with SettingsOnly the server's SETTINGS read (it announces 128 streams, not 100).
    REQUIRE(nicer::test::runLoopUntil(loop.get(), [&] {
        return connection->everConnected() &&
               (greeting == Greeting::Silent || connection->maxConcurrentStreams() == 128);
    }));
    const auto start = std::chrono::steady_clock::now();
    connection->checkStall(start, 1h);
    CHECK_FALSE(connection->error());
    connection->checkStall(start + 1h, 1h);
    REQUIRE(nicer::test::runLoopUntil(
        loop.get(), [&] { return owner.ends.count(*stream) == 1 && connection->closed(); }));
    REQUIRE(connection->error());
    CHECK_THAT(connection->error()->message,
               greeting == Greeting::Silent
                   ? Catch::Contains("no HTTP/2 SETTINGS from 127.0.0.1") &&
                         Catch::Contains("in 3600 s after connecting")
                   : Catch::Contains("did not acknowledge the HTTP/2 SETTINGS in 3600 s") &&
                         Catch::Contains("SETTINGS_TIMEOUT"));
    CHECK(owner.ends[*stream].kind == StreamEnd::Kind::ConnectionClosed);
    CHECK(owner.status.empty());
    CHECK_FALSE(connection->failedPermanently());
}
