#pragma once

#include "net/fetch/FetcherConnection.h"
#include "net/fetch/Url.h"
#include "net/http2/Http2Session.h"
#include "net/transport/TlsContext.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nicer::net {

/**
 * The Fetcher's connections: one current connection per origin that new requests go to (a new one once it
 * stops taking requests, e.g. after GOAWAY), the streams open on each and which file each carries, and
 * what applies to all of them (windows, stall checks, PING, shutdown). Closed connections stay until
 * reap(), so that no connection is destroyed from its own callback.
 */
class ConnectionPool {
public:
    /// Connections report to @p owner; @p tls is the CA setting for https origins.
    ConnectionPool(sd_event* event, FetcherConnection::Owner& owner, TlsOptions tls,
                   std::chrono::milliseconds connectTimeout);
    ~ConnectionPool();
    ConnectionPool(const ConnectionPool&) = delete;
    ConnectionPool& operator=(const ConnectionPool&) = delete;

    /// Sets up TLS now (it is otherwise set up when the first https origin needs it).
    Result<void> setUpTls();
    /// The connection requests to @p url's origin go to, opened with @p session when there is none that
    /// takes requests.
    Result<FetcherConnection*> connectionFor(const Url& url, const Http2Session::Options& session);
    /// Connections opened so far.
    std::size_t opened() const { return m_opened; }

    /// Stream @p stream on @p connection carries file @p file.
    void track(FetcherConnection& connection, std::int32_t stream, std::size_t file);
    /// The file stream @p stream of @p connection carries, if it is tracked.
    std::optional<std::size_t> fileOf(FetcherConnection& connection, std::int32_t stream) const;
    /// Stops tracking the stream; the file it carried.
    std::optional<std::size_t> untrack(FetcherConnection& connection, std::int32_t stream);
    /// Streams tracked over all connections.
    std::size_t streams() const { return m_streams.size(); }
    /// The tracked streams with bytes not acknowledged: (file, bytes), in a stable order.
    std::vector<std::pair<std::size_t, std::size_t>> unacknowledged() const;

    /// New receive windows on every connection and each of its streams.
    void setWindows(std::uint32_t connectionWindow, std::uint32_t streamWindow);
    /// See FetcherConnection::checkStall().
    void checkStall(std::chrono::steady_clock::time_point now, std::chrono::milliseconds timeout,
                    double minRate);
    /// A PING on the connection with the most streams open (for an RTT sample queued behind its data).
    void pingBusiest();
    /// Destroys the connections that are over.
    void reap();
    /// Ends every connection now with @p reason and forgets the streams.
    void failAll(const Error& reason);
    /// Ends every connection politely (GOAWAY, then close).
    void shutdownAll();

private:
    sd_event* m_event;
    FetcherConnection::Owner& m_owner;
    TlsOptions m_tlsOptions;
    std::chrono::milliseconds m_connectTimeout;
    std::shared_ptr<const TlsContext> m_tls;
    std::size_t m_opened = 0;
    std::vector<std::unique_ptr<FetcherConnection>> m_connections;
    std::map<std::string, FetcherConnection*> m_current; // origin -> the connection new requests go to
    std::map<std::pair<FetcherConnection*, std::int32_t>, std::size_t> m_streams;
};

} // namespace nicer::net
