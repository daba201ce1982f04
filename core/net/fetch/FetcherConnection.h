#pragma once

#include "net/fetch/Url.h"
#include "net/http2/Http2Session.h"
#include "net/http2/StreamEnd.h"
#include "net/transport/Connection.h"
#include "net/transport/TlsContext.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace nicer::net {

/// One HTTP/2 connection of a Fetcher to one origin (scheme, host, port): a Connection carrying an
/// Http2Session, with the session's output pumped into the socket and the socket's bytes into the session.
/// It never destroys itself: when it is over (closed() is true) its owner reaps it.
class FetcherConnection final : private Connection::Listener, private Http2Session::Listener {
public:
    /// Receives the connection's events, all from the sd-event loop. It must not destroy the
    /// FetcherConnection from these calls.
    class Owner {
    public:
        virtual ~Owner() = default;
        virtual void onResponseHeaders(FetcherConnection& connection, std::int32_t stream, int status,
                                       const Http2Session::Headers& headers) = 0;
        virtual void onData(FetcherConnection& connection, std::int32_t stream,
                            std::span<const std::uint8_t> data) = 0;
        /// Exactly once per submitted stream. When the connection failed, error() already or soon (by the
        /// next loop iteration) says why.
        virtual void onStreamClosed(FetcherConnection& connection, std::int32_t stream, StreamEnd end) = 0;
        virtual void onPingAck(FetcherConnection& connection, std::chrono::nanoseconds rtt) = 0;
        /// It connected, got a GOAWAY, or closed: time to schedule again or to reap it.
        virtual void onConnectionChanged(FetcherConnection& connection) = 0;
    };

    /// Starts connecting to @p origin's scheme, host and port; requests may be submitted at once.
    static Result<std::unique_ptr<FetcherConnection>> open(sd_event* event, const Url& origin,
                                                           std::shared_ptr<const TlsContext> tls,
                                                           Owner& owner, const Http2Session::Options& session,
                                                           const ConnectionOptions& connection);
    ~FetcherConnection() override;
    FetcherConnection(const FetcherConnection&) = delete;
    FetcherConnection& operator=(const FetcherConnection&) = delete;

    /// "scheme://host:port", the key connections are shared by.
    static std::string originKey(const Url& url);
    const std::string& origin() const { return m_origin; }
    const Endpoint& endpoint() const { return m_endpoint; }

    /// Sends a GET; its outcome arrives through the Owner.
    Result<std::int32_t> submit(const Http2Session::Request& request);
    void resetStream(std::int32_t stream, std::uint32_t errorCode = Http2Session::kCancel);
    /// See Http2Session::consume().
    std::size_t consume(std::int32_t stream, std::size_t n);
    std::size_t unconsumed(std::int32_t stream) const;
    std::size_t unconsumedTotal() const;
    /// Sets the receive windows of the connection and of @p streams (see Http2Session).
    void setWindows(std::uint32_t connectionWindow, std::span<const std::int32_t> streams,
                    std::uint32_t streamWindow);
    void ping();

    /// Fails the connection when streams are open, the server has window to send, and for @p timeout either
    /// nothing came (a stall, which the error names: no SETTINGS from the server, ours never acknowledged,
    /// or no response bytes) or fewer than @p minRate body bytes per second came (a trickle; 0: no minimum).
    /// Withheld credit (rate limiting) stops both clocks: then silence is ours. All times are the @p now of
    /// these calls: what arrives in between counts as of the next call.
    void checkStall(std::chrono::steady_clock::time_point now, std::chrono::milliseconds timeout,
                    double minRate = 0.0);
    /// Ends the connection now with @p reason; its open streams close (ConnectionClosed or NotProcessed).
    void fail(Error reason);
    /// Ends it politely: GOAWAY, then close. For when the fetch is over.
    void shutdown();

    /// New requests may go on this connection.
    bool acceptsRequests() const;
    /// The connection is over and can be destroyed.
    bool closed() const { return m_closed; }
    /// The transport came up (TCP connected and, with TLS, the server verified) at some point.
    bool everConnected() const { return m_everConnected; }
    /// The server sent GOAWAY.
    bool goAwayReceived() const { return m_goAway; }
    std::size_t activeStreams() const;
    std::size_t maxConcurrentStreams() const;
    /// Why the connection ended, when it did not end cleanly.
    const std::optional<Error>& error() const { return m_error; }
    /// The transport failed in a way that retrying the same server cannot fix: the certificate did not
    /// verify, or the server does not offer HTTP/2 (ALPN). False for failures that may pass (refused, reset,
    /// timeout, stall) and for a connection that has not failed.
    bool failedPermanently() const { return m_failedPermanently; }

private:
    FetcherConnection(std::string origin, Endpoint endpoint, Owner& owner);

    // Connection::Listener
    void onConnected(std::string_view alpn) override;
    void onBytes(std::span<const std::uint8_t> bytes) override;
    void onWritable() override;
    void onClosed(std::optional<ConnectionError> error) override;
    // Http2Session::Listener
    void onResponseHeaders(std::int32_t stream, int status, const Http2Session::Headers& headers) override;
    void onData(std::int32_t stream, std::span<const std::uint8_t> data) override;
    void onStreamClosed(std::int32_t stream, StreamEnd end) override;
    void onGoAway(std::int32_t lastStreamId, std::uint32_t errorCode) override;
    void onPingAck(std::chrono::nanoseconds rtt) override;

    void flush();
    void markProgress();

    std::string m_origin;
    Endpoint m_endpoint;
    Owner& m_owner;
    std::unique_ptr<Http2Session> m_session;
    // After the session: destroyed first, so no transport callback reaches a half-destroyed session.
    std::unique_ptr<Connection> m_connection;
    std::optional<Error> m_error;
    bool m_failedPermanently = false;
    bool m_closed = false;
    bool m_everConnected = false;
    bool m_goAway = false;
    bool m_flushing = false;
    bool m_flushAgain = false;
    // Something arrived (a header block, body bytes, a stream's end) since the last checkStall(), which
    // stamps it with its own time.
    bool m_progress = true;
    std::optional<std::chrono::steady_clock::time_point> m_lastProgress;
    // The window the minimum rate is measured over, and the body bytes received in it.
    std::optional<std::chrono::steady_clock::time_point> m_rateWindowStart;
    std::uint64_t m_rateWindowBytes = 0;
};

} // namespace nicer::net
