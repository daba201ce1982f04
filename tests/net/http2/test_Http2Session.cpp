#include "net/InMemoryH2Server.h"
#include "net/RawFrames.h"
#include "net/http2/Http2Session.h"

#include <catch2/catch.hpp>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <malloc.h>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace nicer::net;
using nicer::net::test::InMemoryH2Server;
using namespace std::chrono_literals;

namespace {

using Kind = StreamEnd::Kind;

// Bytes that differ per path and position, so a body mixed up between streams or cut short shows.
std::string bodyFor(const std::string& path, std::size_t size) {
    std::string body(size, '\0');
    std::size_t seed = std::hash<std::string>{}(path);
    for (std::size_t i = 0; i < size; ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        body[i] = static_cast<char>(seed >> 56);
    }
    return body;
}

std::span<const std::uint8_t> bytes(std::string_view text) {
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

struct Recorder : Http2Session::Listener {
    struct Stream {
        int status = 0;
        int headerCalls = 0;
        Http2Session::Headers headers;
        std::string body;
        std::optional<StreamEnd> end;
        int closeCalls = 0;
    };

    void onResponseHeaders(std::int32_t id, int status, const Http2Session::Headers& headers) override {
        auto& stream = streams[id];
        stream.status = status;
        stream.headers = headers;
        ++stream.headerCalls;
        events.push_back("headers " + std::to_string(id));
    }

    void onData(std::int32_t id, std::span<const std::uint8_t> data) override {
        if (throwOnData) {
            throw std::runtime_error("disk full");
        }
        streams[id].body.append(reinterpret_cast<const char*>(data.data()), data.size());
        if (afterData) {
            afterData(id);
        }
    }

    void onStreamClosed(std::int32_t id, StreamEnd end) override {
        auto& stream = streams[id];
        stream.end = end;
        ++stream.closeCalls;
        events.push_back("closed " + std::to_string(id));
    }

    void onGoAway(std::int32_t lastStreamId, std::uint32_t errorCode) override {
        goAways.emplace_back(lastStreamId, errorCode);
        events.push_back("goaway " + std::to_string(lastStreamId));
    }

    void onPingAck(std::chrono::nanoseconds rtt) override { rtts.push_back(rtt); }

    std::map<std::int32_t, Stream> streams;
    std::vector<std::pair<std::int32_t, std::uint32_t>> goAways;
    std::vector<std::chrono::nanoseconds> rtts;
    std::vector<std::string> events;
    bool throwOnData = false;
    std::function<void(std::int32_t)> afterData;
};

// Serves bodyFor(path, size) where the path is "/<size>", e.g. "/100000".
std::optional<InMemoryH2Server::Response> sizedBody(const InMemoryH2Server::Request& request) {
    InMemoryH2Server::Response response;
    response.body = bodyFor(request.path, std::stoul(request.path.substr(1)));
    return response;
}

// A client and a server joined by memory.
struct Connection {
    explicit Connection(InMemoryH2Server::Handler handler, Http2Session::Options options = {},
                        InMemoryH2Server::Settings settings = {}, Http2Session::Clock clock = {})
        : server(std::move(handler), settings) {
        auto created = Http2Session::create(listener, options, std::move(clock));
        INFO((created ? std::string() : created.error().message));
        REQUIRE(created.ok());
        client = std::move(created).value();
    }

    // Shuttles bytes both ways until neither side has anything to say, @p chunk bytes per write.
    void pump(std::size_t chunk = std::numeric_limits<std::size_t>::max()) {
        for (int round = 0; round < 100000; ++round) {
            bool moved = false;
            if (const auto out = client->output(); !out.empty()) {
                const auto n = std::min(chunk, out.size());
                REQUIRE(server.receive(out.substr(0, n)));
                client->drainOutput(n);
                moved = true;
            }
            if (pending.empty()) {
                pending = server.takeOutput();
            }
            if (!pending.empty()) {
                const auto n = std::min(chunk, pending.size());
                const auto received = client->receive(bytes(std::string_view(pending).substr(0, n)));
                INFO((received ? std::string() : received.error().message));
                REQUIRE(received.ok());
                pending.erase(0, n);
                moved = true;
            }
            if (!moved) {
                return;
            }
        }
        FAIL("the client and the server never went quiet");
    }

    std::int32_t get(const std::string& path, Http2Session::Headers headers = {}) {
        auto id = client->submitGet({"https", "example.org", path, std::move(headers)});
        INFO((id ? std::string() : id.error().message));
        REQUIRE(id.ok());
        return *id;
    }

    const Recorder::Stream& stream(std::int32_t id) { return listener.streams[id]; }

    Recorder listener;
    InMemoryH2Server server;
    std::unique_ptr<Http2Session> client;
    std::string pending; // server bytes not yet given to the client
};

Http2Session::Options windows(std::uint32_t connection, std::uint32_t stream) {
    Http2Session::Options options;
    options.connectionWindow = connection;
    options.streamWindow = stream;
    return options;
}

} // namespace

TEST_CASE("Http2Session: a GET returns status, headers and body intact", "[Http2Session]") {
    const std::size_t chunk = GENERATE(std::numeric_limits<std::size_t>::max(), std::size_t{7});
    CAPTURE(chunk);
    Connection c([](const InMemoryH2Server::Request& request) {
        InMemoryH2Server::Response response;
        response.headers = {{"content-type", "application/octet-stream"}, {"x-served", "yes"}};
        response.body = bodyFor(request.path, 100000);
        return response;
    });
    const auto id = c.get("/file.bin?x=1", {{"Range", "bytes=0-99999"}, {"priority", "u=2"}});
    c.pump(chunk);

    REQUIRE(c.server.requests().size() == 1);
    const InMemoryH2Server::Headers sent = {
        {":method", "GET"},         {":scheme", "https"},       {":authority", "example.org"},
        {":path", "/file.bin?x=1"}, {"range", "bytes=0-99999"}, {"priority", "u=2"}};
    CHECK(c.server.requests()[0].headers == sent);

    const auto& s = c.stream(id);
    CHECK(s.status == 200);
    CHECK(s.headerCalls == 1);
    CHECK(s.headers ==
          Http2Session::Headers{{"content-type", "application/octet-stream"}, {"x-served", "yes"}});
    CHECK(s.body == bodyFor("/file.bin?x=1", 100000)); // beyond 65535: the SETTINGS stream window applied
    REQUIRE(s.end);
    CHECK(*s.end == StreamEnd{Kind::Complete, 0});
    CHECK(s.closeCalls == 1);
    CHECK(c.client->activeStreams() == 0);
    CHECK(c.client->unconsumedTotal() == 0);

    // What the client announced, as the server understood it.
    CHECK(c.server.clientSetting(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE) == 16u << 20);
    CHECK(c.server.clientSetting(NGHTTP2_SETTINGS_ENABLE_PUSH) == 0);
    CHECK(c.server.clientSetting(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE) == 64u << 10);
    CHECK(c.server.clientSetting(NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES) == 1);
    // The connection window was raised to 64 MiB; the closed stream's bytes are consumed but, being under
    // half the window, not yet acknowledged.
    CHECK(c.server.connectionSendWindow() == (64 << 20) - 100000);
    CHECK(c.client->wantsRead());
    CHECK_FALSE(c.client->wantsWrite());
    CHECK_FALSE(c.client->finished());
}

TEST_CASE("Http2Session: 50 concurrent streams each get their own body", "[Http2Session]") {
    std::vector<std::int32_t> held;
    Connection c([&](const InMemoryH2Server::Request& request) {
        held.push_back(request.stream);
        return std::optional<InMemoryH2Server::Response>();
    });
    std::map<std::int32_t, std::string> paths;
    for (int i = 0; i < 50; ++i) {
        const std::string path = "/" + std::to_string(1000 * i + 17 * i + 1);
        paths[c.get(path)] = path;
    }
    c.pump();
    // All 50 are open at once on both sides before any answer.
    REQUIRE(held.size() == 50);
    CHECK(c.server.openStreams() == 50);
    CHECK(c.client->activeStreams() == 50);
    CHECK(c.client->remoteMaxConcurrentStreams() == 100);

    // Answer in reverse order.
    for (auto it = c.server.requests().rbegin(); it != c.server.requests().rend(); ++it) {
        c.server.respond(it->stream, *sizedBody(*it));
    }
    c.pump();
    CHECK(c.client->activeStreams() == 0);
    for (const auto& [id, path] : paths) {
        CAPTURE(path);
        const auto& s = c.stream(id);
        CHECK(s.status == 200);
        CHECK(s.body == bodyFor(path, std::stoul(path.substr(1))));
        REQUIRE(s.end);
        CHECK(s.end->kind == Kind::Complete);
    }
}

TEST_CASE("Http2Session: manual flow control holds the server to the stream window", "[Http2Session]") {
    Connection c(sizedBody, windows(64u << 20, 32768));
    const auto id = c.get("/100000");
    c.pump();
    CHECK(c.server.dataSent(id) == 32768);
    CHECK(c.stream(id).body.size() == 32768);
    CHECK(c.client->unconsumed(id) == 32768);
    CHECK(c.client->unconsumedTotal() == 32768);
    CHECK_FALSE(c.stream(id).end);

    // Below half the window nghttp2 keeps the WINDOW_UPDATE back, so nothing moves yet.
    CHECK(c.client->consume(id, 10000) == 10000);
    c.pump();
    CHECK(c.server.dataSent(id) == 32768);
    CHECK(c.client->unconsumed(id) == 22768);

    // 20000 consumed: the window opens by exactly that much.
    CHECK(c.client->consume(id, 10000) == 10000);
    c.pump();
    CHECK(c.server.dataSent(id) == 52768);
    CHECK(c.stream(id).body.size() == 52768);
    CHECK(c.client->unconsumed(id) == 32768);

    // Consuming more than was delivered acknowledges only what was.
    CHECK(c.client->consume(id, 1u << 30) == 32768);
    CHECK(c.client->unconsumed(id) == 0);
    for (int i = 0; i < 10 && !c.stream(id).end; ++i) {
        c.pump();
        c.client->consume(id, c.client->unconsumed(id));
    }
    REQUIRE(c.stream(id).end);
    CHECK(c.stream(id).end->kind == Kind::Complete);
    CHECK(c.stream(id).body == bodyFor("/100000", 100000));
    CHECK(c.client->consume(id, 1) == 0); // closed
}

TEST_CASE("Http2Session: without manual flow control data flows without consume()", "[Http2Session]") {
    auto options = windows(65535, 32768);
    options.manualFlowControl = false;
    Connection c(sizedBody, options);
    const auto id = c.get("/300000");
    c.pump();
    REQUIRE(c.stream(id).end);
    CHECK(c.stream(id).end->kind == Kind::Complete);
    CHECK(c.stream(id).body == bodyFor("/300000", 300000));
    CHECK(c.client->unconsumedTotal() == 0);
}

TEST_CASE("Http2Session: a reset stream gives its unconsumed bytes back to the connection",
          "[Http2Session]") {
    // The connection window (65535, the protocol's initial one) is smaller than one body.
    Connection c(sizedBody, windows(65535, 1u << 20));
    const auto a = c.get("/100000");
    const auto b = c.get("/100001");
    c.pump();
    CHECK(c.server.dataSent(a) == 65535);
    CHECK(c.server.dataSent(b) == 0);
    CHECK(c.client->unconsumedTotal() == 65535);

    c.client->resetStream(a);
    c.pump();
    REQUIRE(c.stream(a).end);
    CHECK(*c.stream(a).end == StreamEnd{Kind::Cancelled, NGHTTP2_CANCEL});
    CHECK(c.server.resetsReceived() ==
          std::vector<std::pair<std::int32_t, std::uint32_t>>{{a, NGHTTP2_CANCEL}});
    CHECK(c.server.dataSent(a) == 65535);
    CHECK(c.server.dataSent(b) == 65535); // a's 65535 bytes came back to the connection
    CHECK(c.client->unconsumed(b) == 65535);
    CHECK(c.client->unconsumedTotal() == 65535);

    c.client->consume(b, 65535);
    c.pump();
    REQUIRE(c.stream(b).end);
    CHECK(c.stream(b).end->kind == Kind::Complete);
    CHECK(c.stream(b).body == bodyFor("/100001", 100001));
}

TEST_CASE("Http2Session: data in flight for a reset stream does not leak connection window",
          "[Http2Session]") {
    Connection c(sizedBody, windows(65535, 1u << 20));
    const auto a = c.get("/100000");
    const auto b = c.get("/100001");
    c.pump();
    REQUIRE(c.server.dataSent(a) == 65535);

    // a's bytes are consumed, so the server sends the rest of a (34465 bytes) and the start of b...
    c.client->consume(a, 65535);
    REQUIRE(c.server.receive(c.client->output()));
    c.client->drainOutput(c.client->output().size());
    const std::string inFlight = c.server.takeOutput();
    CHECK(c.server.dataSent(a) == 100000);
    CHECK(c.server.dataSent(b) == 31070);
    // ...while the client gives a up before those bytes arrive.
    c.client->resetStream(a);
    REQUIRE(c.server.receive(c.client->output()));
    c.client->drainOutput(c.client->output().size());
    REQUIRE(c.stream(a).end);
    CHECK(c.stream(a).end->kind == Kind::Cancelled);
    REQUIRE(c.client->receive(bytes(inFlight)).ok());
    CHECK(c.stream(a).body.size() == 65535); // nothing of a delivered after the reset

    // Only b's bytes are consumed from now on; had a's 34465 late bytes kept their share of the 65535-byte
    // window, b would stall below the half-window mark.
    for (int i = 0; i < 20 && !c.stream(b).end; ++i) {
        c.client->consume(b, c.client->unconsumed(b));
        c.pump();
    }
    REQUIRE(c.stream(b).end);
    CHECK(c.stream(b).end->kind == Kind::Complete);
    CHECK(c.stream(b).body == bodyFor("/100001", 100001));
}

TEST_CASE("Http2Session: a stream reset from onData() drops the rest of its data but not the window",
          "[Http2Session]") {
    Connection c(sizedBody, windows(65535, 1u << 20));
    const auto a = c.get("/100000");
    const auto b = c.get("/100001");
    c.listener.afterData = [&](std::int32_t id) {
        if (id == a) {
            c.client->resetStream(a);
        }
    };
    // All 65535 bytes of a arrive in one receive(): one 16384-byte frame is delivered, then the reset is
    // queued and the other 49151 bytes are dropped, yet credited to the connection window.
    c.pump();
    CHECK(c.stream(a).body.size() == 16384);
    REQUIRE(c.stream(a).end);
    CHECK(c.stream(a).end->kind == Kind::Cancelled);
    CHECK(c.server.dataSent(b) == 65535);
    CHECK(c.client->unconsumedTotal() == 65535);
    for (int i = 0; i < 20 && !c.stream(b).end; ++i) {
        c.client->consume(b, c.client->unconsumed(b));
        c.pump();
    }
    REQUIRE(c.stream(b).end);
    CHECK(c.stream(b).body == bodyFor("/100001", 100001));
}

TEST_CASE("Http2Session: RST_STREAM from the server ends the stream with its code", "[Http2Session]") {
    Connection c(
        [](const InMemoryH2Server::Request&) { return std::optional<InMemoryH2Server::Response>(); });
    const auto internal = c.get("/1");
    const auto refused = c.get("/2");
    const auto complete = c.get("/3");
    c.pump();
    c.server.resetStream(internal, NGHTTP2_INTERNAL_ERROR);
    c.server.resetStream(refused, NGHTTP2_REFUSED_STREAM);
    c.server.respond(complete, {200, {}, "done", {}, false});
    c.pump();

    REQUIRE(c.stream(internal).end);
    CHECK(*c.stream(internal).end == StreamEnd{Kind::ResetByPeer, NGHTTP2_INTERNAL_ERROR});
    CHECK_FALSE(c.stream(internal).end->retryable());
    REQUIRE(c.stream(refused).end);
    CHECK(*c.stream(refused).end == StreamEnd{Kind::ResetByPeer, NGHTTP2_REFUSED_STREAM});
    CHECK(c.stream(refused).end->retryable());
    CHECK(c.stream(refused).end->describe() == "reset by the server (REFUSED_STREAM)");
    REQUIRE(c.stream(complete).end);
    CHECK(c.stream(complete).end->kind == Kind::Complete);
    CHECK(c.stream(complete).body == "done");
    CHECK(c.client->acceptsRequests());
}

TEST_CASE("Http2Session: GOAWAY marks the streams above last_stream_id as not processed", "[Http2Session]") {
    Connection c(
        [](const InMemoryH2Server::Request&) { return std::optional<InMemoryH2Server::Response>(); });
    const auto first = c.get("/1");
    const auto second = c.get("/2");
    const auto third = c.get("/3");
    c.pump();
    REQUIRE(c.server.requests().size() == 3);

    c.server.goAway(first, NGHTTP2_NO_ERROR);
    c.server.respond(first, {200, {}, "first", {}, false});
    c.pump();

    CHECK(c.listener.goAways ==
          std::vector<std::pair<std::int32_t, std::uint32_t>>{{first, NGHTTP2_NO_ERROR}});
    CHECK(c.listener.events ==
          std::vector<std::string>{"goaway 1", "closed 3", "closed 5", "headers 1", "closed 1"});
    for (const auto id : {second, third}) {
        REQUIRE(c.stream(id).end);
        CHECK(c.stream(id).end->kind == Kind::NotProcessed);
        CHECK(c.stream(id).end->retryable());
    }
    REQUIRE(c.stream(first).end);
    CHECK(c.stream(first).end->kind == Kind::Complete);
    CHECK(c.stream(first).body == "first");

    CHECK_FALSE(c.client->acceptsRequests());
    const auto refused = c.client->submitGet({"https", "example.org", "/4", {}});
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("GOAWAY") && Catch::Contains("new connection"));
    CHECK(c.client->finished());
}

TEST_CASE("Http2Session: oversized response headers reset only their stream", "[Http2Session]") {
    Http2Session::Options options;
    options.maxHeaderListSize = 4096;
    options.maxHeaderCount = 5;
    Connection c(
        [](const InMemoryH2Server::Request& request) {
            InMemoryH2Server::Response response;
            response.body = "body of " + request.path;
            if (request.path == "/at-limit" || request.path == "/over-limit") {
                // 42 for ":status: 200" and 38 + length for "x-fill": 4096 exactly at the limit.
                response.headers = {{"x-fill", std::string(request.path == "/at-limit" ? 4016 : 4017, 'f')}};
            } else if (request.path == "/big") {
                for (int i = 0; i < 3; ++i) {
                    response.headers.emplace_back("x-big-" + std::to_string(i), std::string(2000, 'b'));
                }
            } else if (request.path == "/at-count" || request.path == "/over-count") {
                // Fields counted with :status: 5 is the limit.
                for (int i = 0; i < (request.path == "/at-count" ? 4 : 5); ++i) {
                    response.headers.emplace_back("x-" + std::to_string(i), "v");
                }
            }
            return std::optional(response);
        },
        options);
    const auto atLimit = c.get("/at-limit");
    const auto overLimit = c.get("/over-limit");
    const auto big = c.get("/big");
    const auto atCount = c.get("/at-count");
    const auto overCount = c.get("/over-count");
    const auto small = c.get("/small");
    c.pump();

    for (const auto id : {overLimit, big, overCount}) {
        CAPTURE(id);
        REQUIRE(c.stream(id).end);
        CHECK(*c.stream(id).end == StreamEnd{Kind::HeadersTooLarge, NGHTTP2_CANCEL});
        CHECK(c.stream(id).headerCalls == 0);
        CHECK(c.stream(id).body.empty());
    }
    CHECK(c.server.resetsReceived() ==
          std::vector<std::pair<std::int32_t, std::uint32_t>>{
              {overLimit, NGHTTP2_CANCEL}, {big, NGHTTP2_CANCEL}, {overCount, NGHTTP2_CANCEL}});
    for (const auto id : {atLimit, atCount, small}) {
        CAPTURE(id);
        REQUIRE(c.stream(id).end);
        CHECK(c.stream(id).end->kind == Kind::Complete);
        CHECK(c.stream(id).headerCalls == 1);
    }
    CHECK(c.stream(atCount).headers.size() == 4);
    CHECK(c.stream(atLimit).headers.at(0).second.size() == 4016);
    CHECK(c.stream(small).body == "body of /small");

    // The connection carries on.
    CHECK(c.client->wantsRead());
    const auto later = c.get("/small");
    c.pump();
    REQUIRE(c.stream(later).end);
    CHECK(c.stream(later).end->kind == Kind::Complete);
    CHECK(c.client->unconsumedTotal() == 0);
}

TEST_CASE("Http2Session: malformed responses reset only their stream", "[Http2Session]") {
    Connection c([](const InMemoryH2Server::Request& request) {
        InMemoryH2Server::Response response;
        response.body = "12345";
        if (request.path == "/no-status") {
            response.omitStatus = true;
        } else if (request.path == "/short") {
            response.headers = {{"content-length", "10"}};
        }
        return std::optional(response);
    });
    const auto noStatus = c.get("/no-status");
    const auto shortBody = c.get("/short");
    const auto fine = c.get("/fine");
    c.pump();
    for (const auto id : {noStatus, shortBody}) {
        CAPTURE(id);
        REQUIRE(c.stream(id).end);
        CHECK(*c.stream(id).end == StreamEnd{Kind::Malformed, NGHTTP2_PROTOCOL_ERROR});
        CHECK_FALSE(c.stream(id).end->retryable());
    }
    REQUIRE(c.stream(fine).end);
    CHECK(c.stream(fine).end->kind == Kind::Complete);
    CHECK(c.client->wantsRead());
}

TEST_CASE("Http2Session: 1xx interim responses are skipped", "[Http2Session]") {
    Connection c([](const InMemoryH2Server::Request&) {
        InMemoryH2Server::Response response;
        response.earlyHints = InMemoryH2Server::Headers{{"link", "</style.css>; rel=preload"}};
        response.headers = {{"x-final", "1"}};
        response.body = "x";
        return std::optional(response);
    });
    const auto id = c.get("/");
    c.pump();
    CHECK(c.stream(id).headerCalls == 1);
    CHECK(c.stream(id).status == 200);
    CHECK(c.stream(id).headers == Http2Session::Headers{{"x-final", "1"}});
    CHECK(c.stream(id).body == "x");
}

TEST_CASE("Http2Session: PING round-trip time comes from the injected clock", "[Http2Session]") {
    auto now = std::chrono::steady_clock::time_point() + 12345s;
    Connection c(sizedBody, {}, {}, [&] { return now; });
    c.pump();
    c.client->ping();
    now += 37ms;
    c.pump();
    CHECK(c.listener.rtts == std::vector<std::chrono::nanoseconds>{37ms});

    // Two in flight, answered in order, each timed from its own send.
    c.client->ping();
    now += 5ms;
    c.client->ping();
    now += 1us;
    c.pump();
    CHECK(c.listener.rtts == std::vector<std::chrono::nanoseconds>{37ms, 5001us, 1us});
}

TEST_CASE("Http2Session: bytes that are not HTTP/2 give an Error from receive()", "[Http2Session]") {
    Recorder listener;
    auto created = Http2Session::create(listener);
    REQUIRE(created.ok());
    auto& client = **created;
    const auto id = client.submitGet({"https", "example.org", "/", {}});
    REQUIRE(id.ok());
    client.drainOutput(client.output().size()); // preface, SETTINGS and the request went out

    const auto received = client.receive(bytes("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"));
    REQUIRE_FALSE(received.ok());
    CHECK_THAT(received.error().message, Catch::Contains("HTTP/2") && Catch::Contains("SETTINGS"));
    REQUIRE(listener.streams[*id].end);
    CHECK(*listener.streams[*id].end == StreamEnd{Kind::ConnectionClosed, NGHTTP2_PROTOCOL_ERROR});
    CHECK_FALSE(client.wantsRead());
    CHECK_FALSE(client.acceptsRequests());
    CHECK_FALSE(client.receive(bytes("more")).ok());
    CHECK(client.activeStreams() == 0);
}

TEST_CASE("Http2Session: a protocol violation mid-connection gives an Error", "[Http2Session]") {
    Connection c(sizedBody);
    const auto id = c.get("/10");
    c.pump();
    REQUIRE(c.stream(id).end);
    const auto held = c.get("/20");
    c.client->drainOutput(c.client->output().size());

    // A DATA frame on stream 0 is a connection error (RFC 9113 section 6.1).
    const std::string dataOnStreamZero("\x00\x00\x01\x00\x00\x00\x00\x00\x00X", 10);
    const auto received = c.client->receive(bytes(dataOnStreamZero));
    REQUIRE_FALSE(received.ok());
    CHECK_THAT(received.error().message, Catch::Contains("PROTOCOL_ERROR"));
    REQUIRE(c.stream(held).end);
    CHECK(c.stream(held).end->kind == Kind::ConnectionClosed);
    // The GOAWAY that tells the server why is still to be written; then the session is done.
    CHECK_FALSE(c.client->wantsRead());
    REQUIRE(c.client->wantsWrite());
    REQUIRE(c.server.receive(c.client->output()));
    c.client->drainOutput(c.client->output().size());
    CHECK(c.server.goAwaysReceived() == std::vector<std::uint32_t>{NGHTTP2_PROTOCOL_ERROR});
    CHECK(c.client->finished());
}

TEST_CASE("Http2Session: an exception from the listener becomes an Error", "[Http2Session]") {
    Connection c(sizedBody);
    const auto id = c.get("/100");
    c.listener.throwOnData = true;
    const auto out = std::string(c.client->output());
    c.client->drainOutput(out.size());
    REQUIRE(c.server.receive(out));
    const auto received = c.client->receive(bytes(c.server.takeOutput()));
    REQUIRE_FALSE(received.ok());
    CHECK_THAT(received.error().message, Catch::Contains("disk full"));
    REQUIRE(c.stream(id).end);
    CHECK(*c.stream(id).end == StreamEnd{Kind::ConnectionClosed, NGHTTP2_INTERNAL_ERROR});
    CHECK(c.client->finished());
}

TEST_CASE("Http2Session: submitGet refuses requests HTTP/2 cannot carry", "[Http2Session]") {
    Recorder listener;
    auto created = Http2Session::create(listener);
    REQUIRE(created.ok());
    auto& client = **created;
    CHECK_FALSE(client.submitGet({"https", "example.org", "relative", {}}).ok());
    CHECK_FALSE(client.submitGet({"https", "", "/", {}}).ok());
    CHECK_FALSE(client.submitGet({"https", "example.org", "/", {{"Connection", "close"}}}).ok());
    CHECK_FALSE(client.submitGet({"https", "example.org", "/", {{":path", "/x"}}}).ok());
    CHECK_FALSE(client.submitGet({"https", "example.org", "/", {{"bad name", "x"}}}).ok());
    CHECK_FALSE(client.submitGet({"https", "example.org", "/", {{"x", "a\r\nb"}}}).ok());
    CHECK_FALSE(client.submitGet({"https", "example.org", "/", {{"x", std::string(20000, 'x')}}}).ok());
    CHECK(client.activeStreams() == 0);
    CHECK(client.submitGet({"https", "example.org", "/", {{"X-Ok", "fine"}}}).ok());
    CHECK(client.activeStreams() == 1);

    Http2Session::Options tooBig;
    tooBig.streamWindow = 1u << 31;
    CHECK_FALSE(Http2Session::create(listener, tooBig).ok());
}

TEST_CASE("Http2Session: windows can be changed while streams run", "[Http2Session]") {
    Connection c(sizedBody, windows(65535, 16384));
    c.pump();
    CHECK(c.server.connectionSendWindow() == 65535);
    REQUIRE(c.client->setConnectionWindow(200000).ok());
    c.pump();
    CHECK(c.server.connectionSendWindow() == 200000);

    const auto id = c.get("/100000");
    c.pump();
    CHECK(c.server.dataSent(id) == 16384);
    REQUIRE(c.client->setStreamWindow(id, 50000).ok());
    c.pump();
    CHECK(c.server.dataSent(id) == 50000);
    CHECK(c.client->unconsumed(id) == 50000);

    CHECK_FALSE(c.client->setStreamWindow(99, 1000).ok());
    CHECK_FALSE(c.client->setConnectionWindow(1u << 31).ok());
}

TEST_CASE("Http2Session: the server's concurrency limit is visible and respected", "[Http2Session]") {
    std::vector<std::int32_t> held;
    Connection c(
        [&](const InMemoryH2Server::Request& request) {
            held.push_back(request.stream);
            return std::optional<InMemoryH2Server::Response>();
        },
        {}, InMemoryH2Server::Settings{2});
    CHECK(c.client->remoteMaxConcurrentStreams() == 100); // assumed until the server's SETTINGS arrive
    c.pump();
    CHECK(c.client->remoteMaxConcurrentStreams() == 2);

    const auto a = c.get("/1");
    const auto b = c.get("/2");
    const auto queued = c.get("/3");
    const auto dropped = c.get("/4");
    c.pump();
    CHECK(held == std::vector<std::int32_t>{a, b});
    CHECK(c.client->activeStreams() == 4);

    // A request nghttp2 still holds back can be given up too, and still gets its onStreamClosed().
    c.client->resetStream(dropped);
    c.server.respond(a, {200, {}, "a", {}, false});
    c.pump();
    CHECK(held == std::vector<std::int32_t>{a, b, queued});
    REQUIRE(c.stream(dropped).end);
    CHECK(*c.stream(dropped).end == StreamEnd{Kind::Cancelled, NGHTTP2_CANCEL});
    CHECK(c.client->activeStreams() == 2);

    // The cancelled request never reaches the server, even once there is room for it.
    c.server.respond(b, {200, {}, "b", {}, false});
    c.server.respond(queued, {200, {}, "q", {}, false});
    c.pump();
    CHECK(c.server.requests().size() == 3);
    CHECK(c.client->activeStreams() == 0);
    CHECK(c.stream(dropped).closeCalls == 1);
    CHECK(c.stream(queued).body == "q");
}

TEST_CASE("Http2Session: shutdown lets open streams finish, terminate ends them", "[Http2Session]") {
    SECTION("shutdown") {
        Connection c(
            [](const InMemoryH2Server::Request&) { return std::optional<InMemoryH2Server::Response>(); });
        const auto id = c.get("/1");
        c.pump();
        c.client->shutdown();
        c.pump();
        CHECK(c.server.goAwaysReceived() == std::vector<std::uint32_t>{NGHTTP2_NO_ERROR});
        CHECK_FALSE(c.client->acceptsRequests());
        CHECK_FALSE(c.client->finished());
        c.server.respond(id, {200, {}, "late", {}, false});
        c.pump();
        REQUIRE(c.stream(id).end);
        CHECK(c.stream(id).end->kind == Kind::Complete);
        CHECK(c.stream(id).body == "late");
        CHECK(c.client->finished());
    }
    SECTION("terminate") {
        Connection c(
            [](const InMemoryH2Server::Request&) { return std::optional<InMemoryH2Server::Response>(); });
        const auto sent = c.get("/1");
        c.pump();
        const auto unsent = c.get("/2");
        c.client->terminate();
        REQUIRE(c.stream(sent).end);
        CHECK(*c.stream(sent).end == StreamEnd{Kind::ConnectionClosed, NGHTTP2_NO_ERROR});
        REQUIRE(c.stream(unsent).end);
        CHECK(c.stream(unsent).end->kind == Kind::NotProcessed);
        c.pump();
        CHECK(c.server.goAwaysReceived() == std::vector<std::uint32_t>{NGHTTP2_NO_ERROR});
        CHECK(c.server.requests().size() == 1);
        CHECK(c.client->finished());
        CHECK(c.stream(sent).closeCalls == 1);
    }
    SECTION("connection lost") {
        Connection c(
            [](const InMemoryH2Server::Request&) { return std::optional<InMemoryH2Server::Response>(); });
        const auto sent = c.get("/1");
        c.pump();
        const auto unsent = c.get("/2");
        c.client->connectionLost();
        REQUIRE(c.stream(sent).end);
        CHECK(*c.stream(sent).end == StreamEnd{Kind::ConnectionClosed, 0});
        REQUIRE(c.stream(unsent).end);
        CHECK(c.stream(unsent).end->kind == Kind::NotProcessed);
        CHECK(c.client->finished());
        CHECK_FALSE(c.client->submitGet({"https", "example.org", "/3", {}}).ok());
    }
}

// A hostile server, frame by frame: raw frames fed to the session as a server could write them, for what no
// well-behaved nghttp2 server can be made to send (issue 12). Each test asserts what the fetcher relies on:
// the stream or the connection fails with a clear reason, nothing the server had no right to send reaches
// the listener, and memory stays bounded however much the server sends.

namespace {

using namespace nicer::net::test;

// Bytes in use on the heap: the main arena and the mmapped blocks (these tests run in one thread). Under
// AddressSanitizer, which has its own allocator, it reads 0 and the bounds hold trivially.
std::size_t heapInUse() {
    const struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

struct Sent {
    std::uint8_t type = 0;
    std::uint8_t flags = 0;
    std::int32_t stream = 0;
    std::string payload;
};

struct Feed {
    std::size_t bytesAccepted = 0;
    std::size_t peakHeapGrowth = 0;
    std::optional<std::string> error;
};

// The client end of a connection whose server is the test, writing raw frames.
struct RawServer {
    explicit RawServer(Http2Session::Options options = {}) {
        auto created = Http2Session::create(listener, options);
        REQUIRE(created.ok());
        client = std::move(created).value();
        REQUIRE(client->output().starts_with("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
        client->drainOutput(24);
        drain();
        // The server's preface (an empty SETTINGS) and its ACK of the client's SETTINGS.
        REQUIRE(client
                    ->receive(bytes(rawFrame(NGHTTP2_SETTINGS, 0, 0, "") +
                                    rawFrame(NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, "")))
                    .ok());
        drain();
        sent.clear();
        framesSent = 0;
    }

    std::int32_t get(const std::string& path) {
        auto id = client->submitGet({"https", "example.org", path, {}});
        REQUIRE(id.ok());
        drain();
        return *id;
    }

    // Takes what the client wrote, as a server that reads everything would, and keeps its frames.
    void drain() {
        const std::string out(client->output());
        client->drainOutput(out.size());
        for (std::size_t at = 0; at + 9 <= out.size();) {
            const std::size_t length = (static_cast<std::uint8_t>(out[at]) << 16) |
                                       (static_cast<std::uint8_t>(out[at + 1]) << 8) |
                                       static_cast<std::uint8_t>(out[at + 2]);
            Sent frame;
            frame.type = static_cast<std::uint8_t>(out[at + 3]);
            frame.flags = static_cast<std::uint8_t>(out[at + 4]);
            frame.stream =
                static_cast<std::int32_t>(readU32(std::string_view(out).substr(at + 5)) & 0x7fffffff);
            frame.payload = out.substr(at + 9, length);
            ++framesSent;
            if (keepFrames) {
                sent.push_back(std::move(frame));
            }
            at += 9 + length;
        }
    }

    // Feeds @p all in reads of @p chunk bytes until receive() fails, taking the client's output after each
    // read (or not: a server that never reads), and measures the heap meanwhile.
    Feed feed(std::string_view all, std::size_t chunk = 16384, bool drainBetween = true) {
        Feed result;
        const std::size_t before = heapInUse();
        for (std::size_t at = 0; at < all.size(); at += chunk) {
            const auto piece = all.substr(at, chunk);
            const auto received = client->receive(bytes(piece));
            const std::size_t now = heapInUse();
            result.peakHeapGrowth = std::max(result.peakHeapGrowth, now - std::min(before, now));
            if (!received.ok()) {
                result.error = received.error().message;
                return result;
            }
            result.bytesAccepted += piece.size();
            if (drainBetween) {
                drain();
            }
        }
        return result;
    }

    // The error codes of the RST_STREAM frames the client sent for @p stream.
    std::vector<std::uint32_t> resetsSent(std::int32_t stream) const {
        std::vector<std::uint32_t> codes;
        for (const auto& frame : sent) {
            if (frame.type == NGHTTP2_RST_STREAM && frame.stream == stream) {
                codes.push_back(readU32(frame.payload));
            }
        }
        return codes;
    }

    // The error codes of the GOAWAY frames the client sent.
    std::vector<std::uint32_t> goAwaysSent() const {
        std::vector<std::uint32_t> codes;
        for (const auto& frame : sent) {
            if (frame.type == NGHTTP2_GOAWAY) {
                codes.push_back(readU32(std::string_view(frame.payload).substr(4)));
            }
        }
        return codes;
    }

    const Recorder::Stream& stream(std::int32_t id) { return listener.streams[id]; }

    Recorder listener;
    std::unique_ptr<Http2Session> client;
    std::vector<Sent> sent;
    std::size_t framesSent = 0;
    bool keepFrames = true;
};

// A response on @p stream: HEADERS (:status 200) and @p body in DATA frames of at most 16000 bytes.
std::string response(std::int32_t stream, std::size_t body, char fill) {
    std::string frames = rawFrame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, stream, kStatus200);
    for (std::size_t at = 0; at < body; at += 16000) {
        const std::size_t n = std::min<std::size_t>(16000, body - at);
        frames += rawFrame(NGHTTP2_DATA, at + n == body ? NGHTTP2_FLAG_END_STREAM : 0, stream,
                           std::string(n, fill));
    }
    return frames;
}

} // namespace

TEST_CASE("Http2Session: hostile server: RST_STREAM on every stream, then a flood of them, costs nothing",
          "[Http2Session][hostile]") {
    RawServer s;
    std::vector<std::int32_t> ids;
    for (int i = 0; i < 20; ++i) {
        ids.push_back(s.get("/" + std::to_string(i)));
    }
    std::string resets;
    for (const auto id : ids) {
        resets += rawFrame(NGHTTP2_RST_STREAM, 0, id, u32(NGHTTP2_INTERNAL_ERROR));
    }
    REQUIRE_FALSE(s.feed(resets).error);
    for (const auto id : ids) {
        REQUIRE(s.stream(id).end);
        CHECK(*s.stream(id).end == StreamEnd{Kind::ResetByPeer, NGHTTP2_INTERNAL_ERROR});
        CHECK_FALSE(s.stream(id).end->retryable());
        CHECK(s.stream(id).closeCalls == 1);
    }
    CHECK(s.client->activeStreams() == 0);
    CHECK(s.client->acceptsRequests());

    // 200000 more for the streams already closed (3.4 MB): ignored, nothing to answer, nothing kept.
    const std::string flood = repeat(resets, 10000);
    const auto fed = s.feed(flood, 16384, false);
    CHECK_FALSE(fed.error);
    CHECK(fed.bytesAccepted == flood.size());
    CHECK(s.client->output().empty());
    CHECK(fed.peakHeapGrowth < 64 * 1024);
    for (const auto id : ids) {
        CHECK(s.stream(id).closeCalls == 1);
    }

    // A stream still works afterwards.
    const auto later = s.get("/later");
    REQUIRE_FALSE(s.feed(response(later, 100, 'l')).error);
    REQUIRE(s.stream(later).end);
    CHECK(s.stream(later).end->kind == Kind::Complete);

    // A reset of a stream the client never opened is a connection error (RFC 9113 section 5.1).
    const auto idle = s.feed(rawFrame(NGHTTP2_RST_STREAM, 0, 101, u32(NGHTTP2_CANCEL)));
    REQUIRE(idle.error);
    CHECK_THAT(*idle.error, Catch::Contains("RST_STREAM") && Catch::Contains("PROTOCOL_ERROR"));
    CHECK_FALSE(s.client->acceptsRequests());
    s.drain();
    CHECK(s.goAwaysSent() == std::vector<std::uint32_t>{NGHTTP2_PROTOCOL_ERROR});
}

TEST_CASE("Http2Session: hostile server: a PING flood ends the connection with a clear error and bounded "
          "memory",
          "[Http2Session][hostile]") {
    const std::string ping = rawFrame(NGHTTP2_PING, 0, 0, "12345678");
    SECTION("a burst in one read: more than 100 answers pending") {
        RawServer s;
        const auto id = s.get("/x");
        const auto fed = s.feed(repeat(ping, 1000));
        INFO(fed.error.value_or(""));
        REQUIRE(fed.error);
        CHECK_THAT(*fed.error, Catch::Contains("Flooding was detected"));
        REQUIRE(s.stream(id).end);
        CHECK(s.stream(id).end->kind == Kind::ConnectionClosed);
        CHECK(fed.peakHeapGrowth < 256 * 1024);
        CHECK(s.client->finished());
    }
    SECTION("a server that never reads the answers") {
        RawServer s;
        const auto fed = s.feed(repeat(ping, 200000), 10 * ping.size(), false);
        INFO(fed.error.value_or(""));
        REQUIRE(fed.error);
        CHECK_THAT(*fed.error, Catch::Contains("Flooding was detected"));
        // The client's own output buffer (64 KiB of 17-byte ACKs) and nghttp2's queue of 100, then the end.
        CHECK(fed.bytesAccepted / ping.size() < (64 * 1024) / 17 + 100 + 10);
        CHECK(s.client->output().size() <= 64 * 1024 + 17);
        CHECK(fed.peakHeapGrowth < 512 * 1024);
    }
    SECTION("a ping-pong whose answers are read goes on") {
        RawServer s;
        s.keepFrames = false;
        const auto fed = s.feed(repeat(ping, 20000), ping.size(), true);
        CHECK_FALSE(fed.error);
        CHECK(s.framesSent == 20000);
        CHECK(fed.peakHeapGrowth < 64 * 1024);
        CHECK(s.client->acceptsRequests());
    }
}

TEST_CASE("Http2Session: hostile server: a SETTINGS flood ends the connection with a clear error",
          "[Http2Session][hostile]") {
    SECTION("a burst of empty SETTINGS, each wanting an ACK") {
        RawServer s;
        const auto fed = s.feed(repeat(rawFrame(NGHTTP2_SETTINGS, 0, 0, ""), 1000));
        INFO(fed.error.value_or(""));
        REQUIRE(fed.error);
        CHECK_THAT(*fed.error, Catch::Contains("Flooding was detected"));
        CHECK(fed.peakHeapGrowth < 256 * 1024);
        CHECK_FALSE(s.client->acceptsRequests());
    }
    SECTION("one SETTINGS with more entries than allowed (32)") {
        RawServer s;
        const std::string entry = std::string("\x00\x04", 2) + u32(65535); // INITIAL_WINDOW_SIZE
        const auto fed = s.feed(rawFrame(NGHTTP2_SETTINGS, 0, 0, repeat(entry, 33)));
        INFO(fed.error.value_or(""));
        REQUIRE(fed.error);
        CHECK_THAT(*fed.error,
                   Catch::Contains("too many setting entries") && Catch::Contains("ENHANCE_YOUR_CALM"));
        s.drain();
        CHECK(s.goAwaysSent() == std::vector<std::uint32_t>{NGHTTP2_ENHANCE_YOUR_CALM});
    }
}

TEST_CASE("Http2Session: hostile server: endless CONTINUATION frames fail the connection with bounded memory",
          "[Http2Session][hostile]") {
    SECTION("empty CONTINUATION frames: nghttp2's limit (8 per header block) ends the connection") {
        // Debian 12's 1.52.0-1+deb12u2 has the limit (CVE-2024-28182); nicer's header limits never see an
        // empty frame.
        RawServer s;
        const auto id = s.get("/x");
        const auto other = s.get("/y");
        const std::string flood = rawFrame(NGHTTP2_HEADERS, 0, id, kStatus200) +
                                  repeat(rawFrame(NGHTTP2_CONTINUATION, 0, id, ""), 100000);
        const auto fed = s.feed(flood);
        INFO(fed.error.value_or(""));
        REQUIRE(fed.error);
        CHECK_THAT(*fed.error, Catch::Contains("Too many CONTINUATION frames"));
        CHECK(fed.bytesAccepted == 0); // within the first read, 9 frames in
        for (const auto stream : {id, other}) {
            REQUIRE(s.stream(stream).end);
            CHECK(s.stream(stream).end->kind == Kind::ConnectionClosed);
            CHECK(s.stream(stream).headerCalls == 0);
        }
        CHECK(fed.peakHeapGrowth < 64 * 1024);
        CHECK_FALSE(s.client->acceptsRequests());
    }
    SECTION("full CONTINUATION frames: nicer's 64 KiB header limit resets the stream first") {
        RawServer s;
        const auto id = s.get("/x");
        const std::string fill = literal("x-fill", std::string(16000, 'f'));
        const std::string flood = rawFrame(NGHTTP2_HEADERS, 0, id, kStatus200) +
                                  repeat(rawFrame(NGHTTP2_CONTINUATION, 0, id, fill), 100);
        const auto fed = s.feed(flood);
        INFO(fed.error.value_or(""));
        REQUIRE(fed.error);
        CHECK_THAT(*fed.error, Catch::Contains("Too many CONTINUATION frames"));
        // The stream went at the fifth frame (64 KiB of fields), the connection at the ninth.
        REQUIRE(s.stream(id).end);
        CHECK(*s.stream(id).end == StreamEnd{Kind::HeadersTooLarge, NGHTTP2_CANCEL});
        CHECK(s.resetsSent(id) == std::vector<std::uint32_t>{NGHTTP2_CANCEL});
        CHECK(s.stream(id).headerCalls == 0);
        CHECK(fed.bytesAccepted < 10 * 16384);
        CHECK(fed.peakHeapGrowth < 256 * 1024);
    }
}

TEST_CASE("Http2Session: hostile server: huge response headers never grow memory",
          "[Http2Session][hostile]") {
    SECTION("a single 1 MiB header value ends the connection (HPACK takes at most 64 KiB per field)") {
        RawServer s;
        const auto id = s.get("/x");
        const std::string block = kStatus200 + literal("x-huge", std::string(1 << 20, 'h'));
        std::string frames = rawFrame(NGHTTP2_HEADERS, 0, id, block.substr(0, 16384));
        for (std::size_t at = 16384; at < block.size(); at += 16384) {
            const bool last = at + 16384 >= block.size();
            frames += rawFrame(NGHTTP2_CONTINUATION, last ? NGHTTP2_FLAG_END_HEADERS : 0, id,
                               block.substr(at, 16384));
        }
        const auto fed = s.feed(frames);
        INFO(fed.error.value_or(""));
        REQUIRE(fed.error);
        CHECK_THAT(*fed.error, Catch::Contains("COMPRESSION_ERROR") && Catch::Contains("over 64 KiB"));
        CHECK(fed.bytesAccepted == 0);
        REQUIRE(s.stream(id).end);
        CHECK(s.stream(id).end->kind == Kind::ConnectionClosed);
        CHECK(s.stream(id).headerCalls == 0);
        CHECK(fed.peakHeapGrowth < 256 * 1024);
        s.drain();
        CHECK(s.goAwaysSent() == std::vector<std::uint32_t>{NGHTTP2_COMPRESSION_ERROR});
    }
    SECTION("10000 small header fields reset only their stream") {
        RawServer s;
        const auto id = s.get("/x");
        const auto after = s.get("/after");
        // "accept-encoding: gzip, deflate" (static index 16): one byte each.
        const std::string block = kStatus200 + std::string(10000, '\x90');
        const auto fed = s.feed(rawFrame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, id, block));
        INFO(fed.error.value_or(""));
        REQUIRE_FALSE(fed.error);
        REQUIRE(s.stream(id).end);
        CHECK(*s.stream(id).end == StreamEnd{Kind::HeadersTooLarge, NGHTTP2_CANCEL});
        CHECK(s.stream(id).headerCalls == 0);
        CHECK(fed.peakHeapGrowth < 64 * 1024);
        REQUIRE_FALSE(s.feed(response(after, 4, 'f')).error);
        REQUIRE(s.stream(after).end);
        CHECK(s.stream(after).end->kind == Kind::Complete);
        CHECK(s.stream(after).body == "ffff");
    }
}

TEST_CASE("Http2Session: hostile server: malformed response headers reset only their stream",
          "[Http2Session][hostile]") {
    RawServer s;
    const std::vector<std::pair<std::string, std::string>> cases{
        {"two-digit :status", statusLiteral("20")},
        {"letters in :status", statusLiteral("abc")},
        {"four-digit :status", statusLiteral("2000")},
        {"101 in HTTP/2", statusLiteral("101")},
        {"no :status", literal("x-a", "b")},
        {"uppercase name", kStatus200 + literal("X-Upper", "v")},
        {"pseudo-header after a regular one", literal("x-a", "b") + kStatus200},
        {"a request pseudo-header", kStatus200 + literal(":path", "/")},
        {"two :status", kStatus200 + kStatus200},
        {"connection: close", kStatus200 + literal("connection", "close")},
        {"transfer-encoding", kStatus200 + literal("transfer-encoding", "chunked")},
        {"keep-alive", kStatus200 + literal("keep-alive", "5")},
        {"upgrade", kStatus200 + literal("upgrade", "h2c")},
        {"CR LF in a value", kStatus200 + literal("x-split", "a\r\nset-cookie: evil")},
    };
    std::vector<std::int32_t> ids;
    std::string frames;
    for (const auto& [name, block] : cases) {
        ids.push_back(s.get("/" + name));
        frames += rawFrame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, ids.back(), block) +
                  rawFrame(NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, ids.back(), "body");
    }
    const auto fine = s.get("/fine");
    frames += response(fine, 4, 'f');
    const auto fed = s.feed(frames);
    INFO(fed.error.value_or(""));
    REQUIRE_FALSE(fed.error);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        CAPTURE(cases[i].first);
        const auto& stream = s.stream(ids[i]);
        REQUIRE(stream.end);
        CHECK(*stream.end == StreamEnd{Kind::Malformed, NGHTTP2_PROTOCOL_ERROR});
        CHECK(s.resetsSent(ids[i]) == std::vector<std::uint32_t>{NGHTTP2_PROTOCOL_ERROR});
        CHECK(stream.headerCalls == 0);
        CHECK(stream.body.empty());
    }
    REQUIRE(s.stream(fine).end);
    CHECK(s.stream(fine).end->kind == Kind::Complete);
    CHECK(s.stream(fine).body == "ffff");
    CHECK(s.client->acceptsRequests());
}

TEST_CASE("Http2Session: hostile server: DATA after END_STREAM never reaches the listener",
          "[Http2Session][hostile]") {
    RawServer s(windows(65535, 65535));
    const auto a = s.get("/a");
    const auto b = s.get("/b");
    const auto c = s.get("/c");
    // a ends on its DATA, b on its HEADERS; both get more DATA afterwards, in the same read and later.
    const auto fed = s.feed(
        rawFrame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, a, kStatus200) +
        rawFrame(NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, a, "hello") + rawFrame(NGHTTP2_DATA, 0, a, "evil") +
        rawFrame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM, b, kStatus200) +
        rawFrame(NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, b, "evil"));
    INFO(fed.error.value_or(""));
    // nghttp2 keeps no closed streams (RFC 9218 priorities), so it cannot tell these from DATA in flight for
    // a stream it reset: it drops them and credits the connection window.
    REQUIRE_FALSE(fed.error);
    const auto later = s.feed(repeat(rawFrame(NGHTTP2_DATA, 0, a, std::string(16000, 'e')), 8));
    INFO(later.error.value_or(""));
    REQUIRE_FALSE(later.error);

    REQUIRE(s.stream(a).end);
    CHECK(*s.stream(a).end == StreamEnd{Kind::Complete, 0});
    CHECK(s.stream(a).body == "hello");
    CHECK(s.stream(a).closeCalls == 1);
    REQUIRE(s.stream(b).end);
    CHECK(*s.stream(b).end == StreamEnd{Kind::Complete, 0});
    CHECK(s.stream(b).body.empty());
    CHECK(s.client->unconsumedTotal() == 0);

    // 128 kB of late DATA went through a 64 KiB connection window without using it up: c gets all of its
    // own 64000 bytes.
    const auto last = s.feed(response(c, 64000, 'c'));
    INFO(last.error.value_or(""));
    REQUIRE_FALSE(last.error);
    REQUIRE(s.stream(c).end);
    CHECK(*s.stream(c).end == StreamEnd{Kind::Complete, 0});
    CHECK(s.stream(c).body == std::string(64000, 'c'));
}

TEST_CASE("Http2Session: hostile server: WINDOW_UPDATE beyond 2^31-1 fails the stream or the connection",
          "[Http2Session][hostile]") {
    SECTION("on a stream: that stream is reset") {
        RawServer s;
        const auto id = s.get("/x");
        const auto other = s.get("/y");
        const auto fed = s.feed(rawFrame(NGHTTP2_WINDOW_UPDATE, 0, id, u32(0x7fffffff)));
        INFO(fed.error.value_or(""));
        REQUIRE_FALSE(fed.error);
        s.drain();
        REQUIRE(s.stream(id).end);
        CHECK(*s.stream(id).end == StreamEnd{Kind::Malformed, NGHTTP2_FLOW_CONTROL_ERROR});
        CHECK(s.resetsSent(id) == std::vector<std::uint32_t>{NGHTTP2_FLOW_CONTROL_ERROR});
        CHECK_FALSE(s.stream(other).end);
        CHECK(s.client->acceptsRequests());
    }
    SECTION("on the connection: the connection fails") {
        RawServer s;
        const auto id = s.get("/x");
        const auto fed = s.feed(rawFrame(NGHTTP2_WINDOW_UPDATE, 0, 0, u32(0x7fffffff)));
        INFO(fed.error.value_or(""));
        REQUIRE(fed.error);
        CHECK_THAT(*fed.error, Catch::Contains("FLOW_CONTROL_ERROR") && Catch::Contains("above 2^31-1"));
        s.drain();
        CHECK(s.goAwaysSent() == std::vector<std::uint32_t>{NGHTTP2_FLOW_CONTROL_ERROR});
        REQUIRE(s.stream(id).end);
        CHECK(s.stream(id).end->kind == Kind::ConnectionClosed);
        CHECK_FALSE(s.client->acceptsRequests());
    }
}

TEST_CASE("Http2Session: hostile server: DATA beyond the receive window is never delivered",
          "[Http2Session][hostile]") {
    SECTION("the stream window: the stream is reset, none of the frame that overflows is delivered") {
        // In one read and cut into reads of 1000 bytes (nghttp2 1.52 alone delivered the read that
        // overflowed).
        const std::size_t chunk = GENERATE(std::size_t{16384}, std::size_t{1000});
        CAPTURE(chunk);
        RawServer s(windows(1u << 20, 65535));
        const auto id = s.get("/x");
        const auto other = s.get("/y");
        // 4 x 16000 bytes fit in 65535; the fifth frame does not.
        const auto fed = s.feed(rawFrame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, id, kStatus200) +
                                    repeat(rawFrame(NGHTTP2_DATA, 0, id, std::string(16000, 'd')), 6),
                                chunk);
        INFO(fed.error.value_or(""));
        REQUIRE_FALSE(fed.error);
        s.drain();
        CHECK(s.stream(id).body == std::string(64000, 'd'));
        REQUIRE(s.stream(id).end);
        CHECK(*s.stream(id).end == StreamEnd{Kind::Malformed, NGHTTP2_FLOW_CONTROL_ERROR});
        CHECK(s.stream(id).end->describe() == "malformed response, stream reset (FLOW_CONTROL_ERROR)");
        CHECK_FALSE(s.resetsSent(id).empty());
        CHECK(s.resetsSent(id).front() == NGHTTP2_FLOW_CONTROL_ERROR);
        CHECK(s.client->unconsumedTotal() == 0);

        // The connection goes on, its window whole.
        CHECK_FALSE(s.stream(other).end);
        REQUIRE_FALSE(s.feed(response(other, 65535, 'o')).error);
        REQUIRE(s.stream(other).end);
        CHECK(s.stream(other).end->kind == Kind::Complete);
        CHECK(s.stream(other).body == std::string(65535, 'o'));
    }
    SECTION("the connection window: the connection fails, none of the frame that overflows delivered") {
        RawServer s(windows(65535, 1u << 20));
        const auto a = s.get("/a");
        const auto b = s.get("/b");
        std::string frames = rawFrame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, a, kStatus200) +
                             rawFrame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, b, kStatus200);
        for (int i = 0; i < 3; ++i) {
            frames += rawFrame(NGHTTP2_DATA, 0, a, std::string(16000, 'a')) +
                      rawFrame(NGHTTP2_DATA, 0, b, std::string(16000, 'b'));
        }
        const auto fed = s.feed(frames);
        INFO(fed.error.value_or(""));
        REQUIRE(fed.error);
        CHECK_THAT(*fed.error, Catch::Contains("FLOW_CONTROL_ERROR"));
        CHECK(s.stream(a).body.size() + s.stream(b).body.size() == 64000);
        s.drain();
        CHECK(s.goAwaysSent() == std::vector<std::uint32_t>{NGHTTP2_FLOW_CONTROL_ERROR});
        for (const auto stream : {a, b}) {
            REQUIRE(s.stream(stream).end);
            CHECK(s.stream(stream).end->kind == Kind::ConnectionClosed);
        }
    }
}

TEST_CASE("Http2Session: hostile server: SETTINGS never sent, or never acknowledged, can be seen",
          "[Http2Session][hostile]") {
    Recorder listener;
    auto created = Http2Session::create(listener);
    REQUIRE(created.ok());
    auto& client = **created;
    client.drainOutput(client.output().size());
    CHECK_FALSE(client.peerSettingsReceived());
    CHECK_FALSE(client.settingsAcknowledged());
    REQUIRE(client.receive(bytes(rawFrame(NGHTTP2_SETTINGS, 0, 0, ""))).ok());
    CHECK(client.peerSettingsReceived());
    CHECK_FALSE(client.settingsAcknowledged());
    REQUIRE(client.receive(bytes(rawFrame(NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, ""))).ok());
    CHECK(client.settingsAcknowledged());
}
