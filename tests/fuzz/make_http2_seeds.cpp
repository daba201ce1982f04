// Writes seed inputs for fuzz_Http2Session: the bytes a real nghttp2 server (tests/net/InMemoryH2Server)
// sends for a few kinds of response, recorded against Http2Session and framed as the fuzz target reads
// them (see fuzz_Http2Session.cpp). Not part of nicer_fuzzers; run it to renew corpus/Http2Session:
//   cmake --build build-fuzz --target make_http2_seeds && build-fuzz/tests/fuzz/make_http2_seeds DIR

#include "net/InMemoryH2Server.h"
#include "net/http2/Http2Session.h"

#include <nghttp2/nghttp2.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace nicer::net;
using nicer::net::test::InMemoryH2Server;

namespace {

struct ConsumeAll : Http2Session::Listener {
    Http2Session* session = nullptr;
    void onResponseHeaders(std::int32_t, int, const Http2Session::Headers&) override {}
    void onData(std::int32_t stream, std::span<const std::uint8_t> data) override {
        session->consume(stream, data.size());
    }
    void onStreamClosed(std::int32_t, StreamEnd) override {}
};

struct Scenario {
    const char* name;
    std::size_t gets;
    InMemoryH2Server::Handler handler;
    /// Called once the requests are in, with the server: resets, GOAWAY.
    std::function<void(InMemoryH2Server&)> then;
    std::size_t chunk; ///< feed the recording in pieces of this size (0: one piece)
};

std::string body(std::size_t size) {
    std::string text(size, 'x');
    for (std::size_t i = 0; i < size; ++i) {
        text[i] = static_cast<char>('a' + i % 26);
    }
    return text;
}

/// The server's bytes for @p scenario, with the client's requests answered.
std::string record(const Scenario& scenario) {
    InMemoryH2Server server(scenario.handler);
    ConsumeAll listener;
    auto session = std::move(Http2Session::create(listener).value());
    listener.session = session.get();
    for (std::size_t i = 0; i < scenario.gets; ++i) {
        Http2Session::Request request;
        request.authority = "example.org";
        request.path = "/file" + std::to_string(i);
        request.headers = {{"range", "bytes=0-"}};
        (void)session->submitGet(request);
    }
    std::string recorded;
    bool thenDone = !scenario.then;
    for (int round = 0; round < 100; ++round) {
        const std::string out(session->output());
        session->drainOutput(out.size());
        if (!out.empty() && !server.receive(out)) {
            break;
        }
        if (!thenDone && server.requests().size() == scenario.gets) {
            scenario.then(server);
            thenDone = true;
        }
        const std::string in = server.takeOutput();
        if (out.empty() && in.empty()) {
            break;
        }
        recorded += in;
        if (!in.empty() &&
            !session->receive(std::span(reinterpret_cast<const std::uint8_t*>(in.data()), in.size()))) {
            break;
        }
    }
    return recorded;
}

void write(const std::filesystem::path& dir, const Scenario& scenario) {
    const std::string server = record(scenario);
    // Flags: manual flow control; the GETs; consume every byte at once; no resets by the listener.
    std::string input{'\x02', static_cast<char>(scenario.gets - 1), '\xff', '\0'};
    const std::size_t chunk = scenario.chunk == 0 ? 65535 : scenario.chunk;
    for (std::size_t at = 0; at < server.size(); at += chunk) {
        const std::size_t n = std::min(chunk, server.size() - at);
        input += '\0'; // feed the next N bytes, N in two bytes
        input += static_cast<char>(n >> 8);
        input += static_cast<char>(n & 0xff);
        input += server.substr(at, n);
    }
    std::ofstream(dir / scenario.name, std::ios::binary) << input;
    std::printf("%s: %zu server bytes\n", scenario.name, server.size());
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    using Response = InMemoryH2Server::Response;
    const auto always = [](Response response) {
        return [response](const InMemoryH2Server::Request&) { return std::optional<Response>(response); };
    };
    const std::vector<Scenario> scenarios = {
        {"ok-200", 1, always({200, {{"content-length", "5"}}, "hello", std::nullopt, false}), {}, 0},
        {"partial-206-in-pieces",
         1,
         always({206,
                 {{"content-range", "bytes 0-39999/40000"}, {"content-length", "40000"}},
                 body(40000),
                 std::nullopt,
                 false}),
         {},
         1000},
        {"three-streams",
         3,
         [](const InMemoryH2Server::Request& request) -> std::optional<Response> {
             if (request.path == "/file1") {
                 return Response{404, {{"content-type", "text/plain"}}, "not here", std::nullopt, false};
             }
             return Response{200, {{"content-length", "300"}}, body(300), std::nullopt, false};
         },
         {},
         77},
        {"early-hints",
         1,
         always({200,
                 {{"content-length", "2"}},
                 "ok",
                 InMemoryH2Server::Headers{{"link", "</a>; rel=preload"}},
                 false}),
         {},
         0},
        {"no-status", 1, always({200, {}, "body", std::nullopt, true}), {}, 0},
        {"reset-by-server", 2, [](const InMemoryH2Server::Request&) { return std::optional<Response>(); },
         [](InMemoryH2Server& server) {
             server.respond(1, {200, {}, body(100), std::nullopt, false});
             server.resetStream(3, NGHTTP2_REFUSED_STREAM);
         },
         0},
        {"goaway", 3, [](const InMemoryH2Server::Request&) { return std::optional<Response>(); },
         [](InMemoryH2Server& server) {
             server.respond(1, {200, {{"content-length", "10"}}, body(10), std::nullopt, false});
             server.goAway(1, NGHTTP2_NO_ERROR);
         },
         0},
        {"many-headers",
         1,
         [](const InMemoryH2Server::Request&) {
             Response response{200, {}, "x", std::nullopt, false};
             for (int i = 0; i < 40; ++i) {
                 response.headers.emplace_back("x-header-" + std::to_string(i), std::string(40, 'v'));
             }
             return std::optional<Response>(response);
         },
         {},
         0},
    };
    for (const auto& scenario : scenarios) {
        write(dir, scenario);
    }
    return 0;
}
