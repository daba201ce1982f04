#pragma once

#include <climits>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace nicer::net::test {

/// A tiny HTTP/2 server (h2c with prior knowledge, nghttp2's server API over a real loopback TCP socket, in
/// a thread of its own) for the misbehaviour real servers cannot be made to show: a stream reset or a
/// connection dropped in the middle of a body, a server that stalls or trickles, a Content-Length that lies,
/// refused streams, hand-written frames (RawFrames.h) that break the protocol, a connection that never
/// answers. Everything else is tested against nghttpd and nginx.
class MisbehavingH2Server {
public:
    /// How the server answers GETs of one path. The misbehaviour applies to the first `times` requests of
    /// the path; later ones are served correctly, so a retry can succeed.
    struct Behaviour {
        std::string body;
        /// Answer "Range: bytes=N-" with 206 (else always 200 with the whole body).
        bool honourRange = true;
        /// Announce this Content-Length instead of the true one.
        std::optional<std::uint64_t> contentLength;
        /// End the stream (END_STREAM) after this many body bytes, however many were announced.
        std::optional<std::size_t> endAfter;
        /// Reset the stream (RST_STREAM INTERNAL_ERROR) after this many body bytes.
        std::optional<std::size_t> resetAfter;
        /// Send nothing more after this many body bytes; the connection stays open.
        std::optional<std::size_t> stallAfter;
        /// After this many body bytes send GOAWAY (NO_ERROR, naming the streams seen so far) and close the
        /// connection, cutting every response in progress.
        std::optional<std::size_t> goAwayAfter;
        /// After this many body bytes, send one byte every trickleEvery.
        std::optional<std::size_t> trickleAfter;
        std::chrono::milliseconds trickleEvery{20};
        /// Refuse the stream (RST_STREAM with refuseCode, REFUSED_STREAM unless set) instead of answering.
        bool refuse = false;
        std::uint32_t refuseCode = 0x7;
        /// Write these bytes (raw frames for the request's stream id) instead of answering. They go out
        /// between whole frames of the server's own; their header blocks must leave HPACK's dynamic table
        /// alone (RawFrames.h's literal()).
        std::function<std::string(std::int32_t stream)> raw;
        int times = INT_MAX;

        /// @p content served correctly.
        static Behaviour plain(std::string content) {
            Behaviour behaviour;
            behaviour.body = std::move(content);
            return behaviour;
        }
    };

    struct Request {
        std::string path;
        std::string range;    ///< the Range header, "" when none
        std::string priority; ///< the RFC 9218 priority header, "" when none
        int connection = 0;   ///< 1 for the first connection accepted, and so on
    };

    /// Listens on 127.0.0.1 on a free port and serves in a thread; throws std::runtime_error on failure.
    MisbehavingH2Server();
    ~MisbehavingH2Server();
    MisbehavingH2Server(const MisbehavingH2Server&) = delete;
    MisbehavingH2Server& operator=(const MisbehavingH2Server&) = delete;

    /// How the server greets a new connection.
    enum class Greeting {
        Normal,       ///< its SETTINGS (MAX_CONCURRENT_STREAMS 128), then HTTP/2
        Silent,       ///< reads everything and never writes a byte
        SettingsOnly, ///< its SETTINGS, then reads everything and writes nothing more: ours are never ACKed
    };

    /// Sets how @p path is answered (unknown paths get 404).
    void serve(const std::string& path, Behaviour behaviour);
    /// Sets how connections accepted from now on are greeted; @p raw is written right after the SETTINGS
    /// of a Normal greeting (e.g. a flood of PINGs).
    void greet(Greeting greeting, std::string raw = {});
    std::uint16_t port() const { return m_port; }
    /// "http://127.0.0.1:PORT" + @p path.
    std::string url(const std::string& path) const;
    int connectionsAccepted() const { return m_connections.load(); }
    /// The most streams that were open at once, over all connections.
    int maxOpenStreams() const { return m_maxOpen.load(); }
    std::vector<Request> requests() const;

private:
    struct Client;
    struct Stream;
    struct Callbacks;

    void run();
    bool serviceClient(Client& client, bool readable);
    void respond(Client& client, std::int32_t stream);

    int m_listener = -1;
    int m_wake[2] = {-1, -1};
    std::uint16_t m_port = 0;
    std::atomic<int> m_connections{0};
    std::atomic<int> m_open{0};
    std::atomic<int> m_maxOpen{0};
    mutable std::mutex m_mutex;
    std::map<std::string, Behaviour> m_paths;
    Greeting m_greeting = Greeting::Normal;
    std::string m_greetingRaw;
    std::map<std::string, int> m_served;
    std::vector<Request> m_requests;
    std::thread m_thread;
};

} // namespace nicer::net::test
