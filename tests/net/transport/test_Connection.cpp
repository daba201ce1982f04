// The transport against REAL servers (nghttpd, nginx) started by the h2_servers fixture: plain TCP (h2c),
// TLS with the test CA, and the failures a user will meet (untrusted CA, wrong name, refused, no h2).

#include "Skip.h"
#include "libsystemd/Event.h"
#include "net/H2Servers.h"
#include "net/transport/Connection.h"
#include "net/transport/SocketAddress.h"
#include "util/UniqueFd.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <netinet/in.h>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <vector>

using namespace nicer;
using namespace nicer::net;
using nicer::test::H2Servers;
using namespace std::chrono_literals;

namespace {

// The HTTP/2 client connection preface (RFC 9113 3.4) followed by an empty SETTINGS frame.
std::vector<std::uint8_t> clientPreface() {
    // Frame header: length 0 (3 bytes), type 0x4 SETTINGS, flags 0, stream 0 (4 bytes).
    const std::string bytes =
        std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string("\0\0\0\x04\0\0\0\0\0", 9);
    return {bytes.begin(), bytes.end()};
}

class Loop {
public:
    Loop() {
        sd_event* event = nullptr;
        REQUIRE(sd_event_new(&event) >= 0);
        m_event.reset(event);
    }
    sd_event* get() const { return m_event.get(); }

    /// Runs the loop until @p done() holds or a generous sd-event timer (a safety net, not a measurement)
    /// expires; returns done().
    template <typename Predicate>
    bool runUntil(Predicate done, std::chrono::milliseconds limit = 30s) {
        bool expired = false;
        sd_event_source* source = nullptr;
        REQUIRE(sd_event_add_time_relative(
                    get(), &source, CLOCK_MONOTONIC, static_cast<std::uint64_t>(limit.count()) * 1000, 0,
                    [](sd_event_source*, std::uint64_t, void* flag) noexcept {
                        *static_cast<bool*>(flag) = true;
                        return 0;
                    },
                    &expired) >= 0);
        const libsystemd::EventSourcePtr timer(source);
        while (!done() && !expired) {
            REQUIRE(sd_event_run(get(), UINT64_MAX) >= 0);
        }
        return done();
    }

private:
    libsystemd::EventPtr m_event;
};

// Records what the connection reports. No REQUIRE in the callbacks: an exception there would be caught by
// the Connection and turned into a failure of the connection instead of the test.
struct Recorder : Connection::Listener {
    std::unique_ptr<Connection> connection;
    bool sendPrefaceOnConnect = true;
    bool destroyOnBytes = false;

    bool connected = false;
    std::string alpn;
    std::vector<std::uint8_t> received;
    std::vector<std::uint8_t> unsent;
    int writableCalls = 0;
    bool closed = false;
    std::optional<Error> error;
    bool permanent = false; // what onClosed() said of the error: retrying the same server cannot help
    std::string problem;    // a misuse noticed inside a callback

    void queue(const std::vector<std::uint8_t>& bytes) {
        unsent.insert(unsent.end(), bytes.begin(), bytes.end());
        pump();
    }
    void pump() {
        while (!unsent.empty()) {
            const auto taken = connection->send(unsent);
            if (!taken) {
                problem = taken.error().message;
                return;
            }
            if (*taken == 0) {
                return; // full: onWritable() will call again
            }
            unsent.erase(unsent.begin(), unsent.begin() + static_cast<std::ptrdiff_t>(*taken));
        }
    }

    void onConnected(std::string_view selected) override {
        connected = true;
        alpn = selected;
        if (sendPrefaceOnConnect) {
            queue(clientPreface());
        }
    }
    void onBytes(std::span<const std::uint8_t> bytes) override {
        received.insert(received.end(), bytes.begin(), bytes.end());
        if (destroyOnBytes) {
            connection.reset();
        }
    }
    void onWritable() override {
        ++writableCalls;
        pump();
    }
    void onClosed(std::optional<ConnectionError> why) override {
        closed = true;
        if (why) {
            error = std::move(why->error);
            permanent = why->permanent;
        }
    }

    /// A whole frame header arrived: a server's first frame is its SETTINGS (RFC 9113 3.4).
    bool gotFrameHeader() const { return received.size() >= 9; }
    int firstFrameType() const { return received.size() >= 9 ? received[3] : -1; }
    int firstFrameStream() const {
        return received.size() >= 9
                   ? (received[5] & 0x7f) << 24 | received[6] << 16 | received[7] << 8 | received[8]
                   : -1;
    }
};

TlsOptions testCa() {
    return TlsOptions{H2Servers::shared().caFile};
}

// Connects, sends the preface, and waits for the server's first frame or the end.
void expectSettingsBack(const Endpoint& endpoint, const TlsOptions& tls, std::string_view expectedAlpn) {
    Loop loop;
    Recorder recorder;
    auto opened = Connection::open(loop.get(), endpoint, tls, recorder);
    REQUIRE(opened);
    recorder.connection = std::move(*opened);
    REQUIRE(loop.runUntil([&] { return recorder.gotFrameHeader() || recorder.closed; }));
    INFO(endpoint.toString() << ": " << (recorder.error ? recorder.error->message : "no error"));
    REQUIRE(recorder.problem.empty());
    REQUIRE_FALSE(recorder.closed);
    CHECK(recorder.connected);
    CHECK(recorder.alpn == expectedAlpn);
    CHECK(recorder.firstFrameType() == 0x4);
    CHECK(recorder.firstFrameStream() == 0);
    CHECK(recorder.connection->isOpen());
    CHECK(recorder.connection->bytesSent() >= clientPreface().size());
    CHECK(recorder.connection->bytesReceived() >= recorder.received.size());
    if (endpoint.tls) { // TLS records and the handshake cost bytes on the wire
        CHECK(recorder.connection->bytesReceived() > recorder.received.size());
    }
}

struct Failure {
    std::string message; // "" if it connected instead
    bool permanent = false;
};

// Connects and returns the error the connection ended with.
Failure failureOf(const Endpoint& endpoint, const TlsOptions& tls, const ConnectionOptions& options = {}) {
    Loop loop;
    Recorder recorder;
    auto opened = Connection::open(loop.get(), endpoint, tls, recorder, options);
    REQUIRE(opened);
    recorder.connection = std::move(*opened);
    REQUIRE(loop.runUntil([&] { return recorder.connected || recorder.closed; }));
    if (recorder.connected) {
        return {};
    }
    REQUIRE(recorder.error);
    return {recorder.error->message, recorder.permanent};
}

} // namespace

TEST_CASE("h2c to nghttpd: the client preface gets the server's SETTINGS", "[connection][h2c]") {
    expectSettingsBack({"127.0.0.1", H2Servers::shared().nghttpdH2cPort, false}, {}, "");
}

TEST_CASE("h2c to nginx, preface queued before the connection is up", "[connection][h2c]") {
    Loop loop;
    Recorder recorder;
    recorder.sendPrefaceOnConnect = false;
    auto opened =
        Connection::open(loop.get(), {"127.0.0.1", H2Servers::shared().nginxH2cPort, false}, {}, recorder);
    REQUIRE(opened);
    recorder.connection = std::move(*opened);
    recorder.queue(clientPreface());
    CHECK(recorder.unsent.empty());
    CHECK(recorder.connection->queuedBytes() == clientPreface().size());
    REQUIRE(loop.runUntil([&] { return recorder.gotFrameHeader() || recorder.closed; }));
    CHECK(recorder.connected);
    CHECK(recorder.alpn.empty());
    CHECK(recorder.firstFrameType() == 0x4);
    CHECK(recorder.connection->queuedBytes() == 0);
    CHECK(recorder.writableCalls >= 1);
}

TEST_CASE("TLS to nghttpd by name (resolved off the loop) with the test CA: ALPN h2", "[connection][tls]") {
    expectSettingsBack({H2Servers::shared().host, H2Servers::shared().nghttpdTlsPort, true}, testCa(), "h2");
}

TEST_CASE("TLS to nginx with the test CA: ALPN h2", "[connection][tls]") {
    expectSettingsBack({H2Servers::shared().host, H2Servers::shared().nginxTlsPort, true}, testCa(), "h2");
}

TEST_CASE("TLS to an IPv4 literal checks the certificate's IP address", "[connection][tls]") {
    expectSettingsBack({"127.0.0.1", H2Servers::shared().nginxTlsPort, true}, testCa(), "h2");
}

TEST_CASE("TLS over IPv6 loopback", "[connection][tls][ipv6]") {
    if (!H2Servers::shared().ipv6) {
        NICER_SKIP("no IPv6 loopback (::1) on this machine");
    }
    expectSettingsBack({"::1", H2Servers::shared().nginxTlsPort, true}, testCa(), "h2");
    expectSettingsBack({"[::1]", H2Servers::shared().nginxTlsPort, true}, testCa(), "h2");
}

TEST_CASE("TLS without the CA file: not trusted, and says to pass --ca-file", "[connection][tls][errors]") {
    const auto [error, permanent] =
        failureOf({H2Servers::shared().host, H2Servers::shared().nghttpdTlsPort, true}, {});
    INFO(error);
    CHECK_THAT(error, Catch::Contains("TLS: certificate of " + H2Servers::shared().host));
    CHECK_THAT(error, Catch::Contains("is not trusted"));
    CHECK_THAT(error, Catch::Contains("unable to get local issuer certificate"));
    CHECK_THAT(error, Catch::Contains("--ca-file"));
    CHECK(permanent);
}

TEST_CASE("TLS to a server whose certificate names another host", "[connection][tls][errors]") {
    const auto [error, permanent] =
        failureOf({H2Servers::shared().host, H2Servers::shared().nghttpdWrongNamePort, true}, testCa());
    INFO(error);
    CHECK_THAT(error, Catch::Contains("TLS: certificate is not valid for " + H2Servers::shared().host));
    CHECK_THAT(error, Catch::Contains(H2Servers::shared().wrongName));
    CHECK(permanent);
}

TEST_CASE("TLS to a server that does not offer h2", "[connection][tls][errors]") {
    const auto [error, permanent] =
        failureOf({H2Servers::shared().host, H2Servers::shared().nginxHttp1TlsPort, true}, testCa());
    INFO(error);
    CHECK_THAT(error, Catch::Contains("does not speak HTTP/2 over TLS (ALPN offered h2"));
    CHECK_THAT(error, Catch::Contains(std::to_string(H2Servers::shared().nginxHttp1TlsPort)));
    CHECK(permanent);
}

TEST_CASE("TLS to a port that serves plain h2c", "[connection][tls][errors]") {
    const auto [error, permanent] =
        failureOf({H2Servers::shared().host, H2Servers::shared().nghttpdH2cPort, true}, testCa());
    INFO(error);
    CHECK_THAT(error, Catch::Contains("TLS handshake with " + H2Servers::shared().host));
    CHECK_FALSE(permanent); // not TLS at all: perhaps the wrong port, not a bad server
}

TEST_CASE("A closed port: connection refused, with the address tried", "[connection][errors]") {
    const auto [error, permanent] = failureOf({"127.0.0.1", H2Servers::shared().closedPort, false}, {});
    INFO(error);
    CHECK_THAT(error, Catch::Contains("cannot connect to 127.0.0.1:" +
                                      std::to_string(H2Servers::shared().closedPort)));
    CHECK_THAT(error, Catch::Contains("Connection refused"));
    CHECK_THAT(error, Catch::Contains("is the server running"));
    CHECK_FALSE(permanent);
}

TEST_CASE("A server that never answers the connect: timeout", "[connection][errors]") {
    // A listener with backlog 0 that never accepts: once one connection waits in its queue, the kernel
    // drops further SYNs, so the next connect neither succeeds nor fails until the timeout.
    const UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(listener);
    auto address = SocketAddress::fromLiteral("127.0.0.1", 0);
    REQUIRE(address);
    REQUIRE(::bind(listener.get(), address->get(), address->length) == 0);
    REQUIRE(::listen(listener.get(), 0) == 0);
    REQUIRE(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address->storage), &address->length) ==
            0);
    const std::uint16_t port = ntohs(reinterpret_cast<const sockaddr_in*>(&address->storage)->sin_port);
    const UniqueFd filler(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(::connect(filler.get(), address->get(), address->length) == 0);

    ConnectionOptions options;
    options.connectTimeout = 300ms;
    const auto [error, permanent] = failureOf({"127.0.0.1", port, false}, {}, options);
    INFO(error);
    CHECK_THAT(error, Catch::Contains("cannot connect to 127.0.0.1:" + std::to_string(port)));
    CHECK_THAT(error, Catch::Contains("Connection timed out"));
    CHECK_THAT(error, Catch::Contains("no answer within 0.3 s"));
    CHECK_FALSE(permanent);
}

TEST_CASE("A name that does not resolve", "[connection][errors]") {
    // RFC 2606 reserves .invalid. Without DNS the lookup may also time out instead: either says so.
    ConnectionOptions options;
    options.connectTimeout = 5s;
    const auto [error, permanent] = failureOf({"no-such-host.invalid", 443, true}, {}, options);
    INFO(error);
    CHECK_THAT(error, Catch::StartsWith("cannot resolve host name \"no-such-host.invalid\""));
    CHECK_FALSE(permanent);
}

TEST_CASE("An unreadable CA file fails at once, naming the file", "[connection][tls][errors]") {
    Loop loop;
    Recorder recorder;
    const auto opened =
        Connection::open(loop.get(), {H2Servers::shared().host, H2Servers::shared().nghttpdTlsPort, true},
                         TlsOptions{H2Servers::shared().dir / "no-such-ca.pem"}, recorder);
    REQUIRE_FALSE(opened);
    CHECK_THAT(opened.error().message, Catch::Contains("no-such-ca.pem"));
    CHECK_THAT(opened.error().message, Catch::Contains("--ca-file"));
}

TEST_CASE("A small send buffer takes part and reports room with onWritable", "[connection][h2c]") {
    Loop loop;
    Recorder recorder;
    ConnectionOptions options;
    options.sendBufferLimit = 10;
    auto opened = Connection::open(loop.get(), {"127.0.0.1", H2Servers::shared().nghttpdH2cPort, false}, {},
                                   recorder, options);
    REQUIRE(opened);
    recorder.connection = std::move(*opened);
    const auto allSentAndAnswered = [&] {
        return recorder.gotFrameHeader() && recorder.unsent.empty() &&
               recorder.connection->queuedBytes() == 0;
    };
    REQUIRE(loop.runUntil([&] { return allSentAndAnswered() || recorder.closed; }));
    INFO((recorder.error ? recorder.error->message : "no error") << "; " << recorder.problem);
    CHECK(recorder.problem.empty());
    CHECK(recorder.unsent.empty());
    CHECK(recorder.writableCalls >= 4); // 33 bytes through a 10-byte queue
    CHECK(recorder.firstFrameType() == 0x4);
}

TEST_CASE("Paused reading delivers nothing until resumed", "[connection][tls]") {
    Loop loop;
    Recorder recorder;
    auto opened = Connection::open(
        loop.get(), {H2Servers::shared().host, H2Servers::shared().nginxTlsPort, true}, testCa(), recorder);
    REQUIRE(opened);
    recorder.connection = std::move(*opened);
    recorder.connection->pauseReading(true);
    REQUIRE(loop.runUntil([&] { return recorder.connected || recorder.closed; }));
    REQUIRE(recorder.connected);
    // Time for the server's SETTINGS to arrive; reading is paused, so none may be delivered.
    loop.runUntil([] { return false; }, 300ms);
    CHECK(recorder.received.empty());
    recorder.connection->pauseReading(false);
    REQUIRE(loop.runUntil([&] { return recorder.gotFrameHeader() || recorder.closed; }));
    CHECK(recorder.firstFrameType() == 0x4);
}

TEST_CASE("A stall timeout ends a connection on which nothing arrives", "[connection][h2c]") {
    Loop loop;
    Recorder recorder;
    recorder.sendPrefaceOnConnect = false; // nghttpd sends its SETTINGS, then waits for ours: silence
    auto opened =
        Connection::open(loop.get(), {"127.0.0.1", H2Servers::shared().nghttpdH2cPort, false}, {}, recorder);
    REQUIRE(opened);
    recorder.connection = std::move(*opened);
    recorder.connection->setStallTimeout(200ms);
    REQUIRE(loop.runUntil([&] { return recorder.closed; }));
    REQUIRE(recorder.error);
    CHECK_THAT(recorder.error->message, Catch::Contains("stalled"));
    CHECK_THAT(recorder.error->message, Catch::Contains(std::to_string(H2Servers::shared().nghttpdH2cPort)));
    CHECK_FALSE(recorder.permanent);
}

TEST_CASE("A listener may destroy the connection from inside a callback", "[connection][tls]") {
    Loop loop;
    Recorder recorder;
    recorder.destroyOnBytes = true;
    auto opened = Connection::open(
        loop.get(), {H2Servers::shared().host, H2Servers::shared().nghttpdTlsPort, true}, testCa(), recorder);
    REQUIRE(opened);
    recorder.connection = std::move(*opened);
    REQUIRE(loop.runUntil([&] { return !recorder.connection; }));
    CHECK_FALSE(recorder.received.empty());
    loop.runUntil([] { return false; }, 100ms); // nothing may fire for the destroyed connection
    CHECK_FALSE(recorder.closed);
}

TEST_CASE("close() ends the connection without a callback, and send() then fails", "[connection][h2c]") {
    Loop loop;
    Recorder recorder;
    auto opened =
        Connection::open(loop.get(), {"127.0.0.1", H2Servers::shared().nghttpdH2cPort, false}, {}, recorder);
    REQUIRE(opened);
    recorder.connection = std::move(*opened);
    REQUIRE(loop.runUntil([&] { return recorder.gotFrameHeader() || recorder.closed; }));
    recorder.connection->close();
    CHECK_FALSE(recorder.connection->isOpen());
    const auto sent = recorder.connection->send(clientPreface());
    REQUIRE_FALSE(sent);
    CHECK_THAT(sent.error().message, Catch::Contains("closed"));
    loop.runUntil([] { return false; }, 100ms);
    CHECK_FALSE(recorder.closed);
}
