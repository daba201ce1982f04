#include "net/fetch/ConnectionPool.h"

namespace nicer::net {

ConnectionPool::ConnectionPool(sd_event* event, FetcherConnection::Owner& owner, TlsOptions tls,
                               std::chrono::milliseconds connectTimeout)
    : m_event(event)
    , m_owner(owner)
    , m_tlsOptions(std::move(tls))
    , m_connectTimeout(connectTimeout) {}

ConnectionPool::~ConnectionPool() = default;

Result<void> ConnectionPool::setUpTls() {
    if (m_tls) {
        return {};
    }
    auto tls = TlsContext::create(m_tlsOptions);
    if (!tls) {
        return tls.error();
    }
    m_tls = std::move(*tls);
    return {};
}

Result<FetcherConnection*> ConnectionPool::connectionFor(const Url& url,
                                                         const Http2Session::Options& session) {
    const std::string key = FetcherConnection::originKey(url);
    if (const auto it = m_current.find(key); it != m_current.end() && it->second->acceptsRequests()) {
        return it->second;
    }
    if (url.scheme == "https") {
        // Only a redirect gets here without TLS: a manifest with https URLs has it set up from the start.
        if (auto tls = setUpTls(); !tls) {
            return tls.error();
        }
    }
    ConnectionOptions options;
    options.connectTimeout = m_connectTimeout;
    auto opened = FetcherConnection::open(m_event, url, m_tls, m_owner, session, options);
    if (!opened) {
        return opened.error();
    }
    ++m_opened;
    FetcherConnection* connection = opened->get();
    m_connections.push_back(std::move(*opened));
    m_current[key] = connection;
    return connection;
}

void ConnectionPool::track(FetcherConnection& connection, std::int32_t stream, std::size_t file) {
    m_streams[{&connection, stream}] = file;
}

std::optional<std::size_t> ConnectionPool::fileOf(FetcherConnection& connection, std::int32_t stream) const {
    const auto it = m_streams.find({&connection, stream});
    return it == m_streams.end() ? std::nullopt : std::optional<std::size_t>(it->second);
}

std::optional<std::size_t> ConnectionPool::untrack(FetcherConnection& connection, std::int32_t stream) {
    const auto it = m_streams.find({&connection, stream});
    if (it == m_streams.end()) {
        return std::nullopt;
    }
    const std::size_t file = it->second;
    m_streams.erase(it);
    return file;
}

std::vector<std::pair<std::size_t, std::size_t>> ConnectionPool::unacknowledged() const {
    std::vector<std::pair<std::size_t, std::size_t>> pending;
    for (const auto& [key, file] : m_streams) {
        if (const std::size_t n = key.first->unconsumed(key.second); n > 0) {
            pending.emplace_back(file, n);
        }
    }
    return pending;
}

void ConnectionPool::setWindows(std::uint32_t connectionWindow, std::uint32_t streamWindow) {
    for (auto& connection : m_connections) {
        std::vector<std::int32_t> streams;
        for (const auto& [key, file] : m_streams) {
            if (key.first == connection.get()) {
                streams.push_back(key.second);
            }
        }
        connection->setWindows(connectionWindow, streams, streamWindow);
    }
}

void ConnectionPool::checkStall(std::chrono::steady_clock::time_point now, std::chrono::milliseconds timeout,
                                double minRate) {
    for (auto& connection : m_connections) {
        connection->checkStall(now, timeout, minRate);
    }
}

void ConnectionPool::pingBusiest() {
    FetcherConnection* busiest = nullptr;
    for (auto& connection : m_connections) {
        if (!connection->closed() && (!busiest || connection->activeStreams() > busiest->activeStreams())) {
            busiest = connection.get();
        }
    }
    if (busiest && busiest->activeStreams() > 0) {
        busiest->ping();
    }
}

void ConnectionPool::reap() {
    for (auto it = m_connections.begin(); it != m_connections.end();) {
        FetcherConnection* connection = it->get();
        if (!connection->closed()) {
            ++it;
            continue;
        }
        if (const auto current = m_current.find(connection->origin());
            current != m_current.end() && current->second == connection) {
            m_current.erase(current);
        }
        it = m_connections.erase(it);
    }
}

void ConnectionPool::failAll(const Error& reason) {
    for (auto& connection : m_connections) {
        connection->fail(reason);
    }
    m_streams.clear();
}

void ConnectionPool::shutdownAll() {
    for (auto& connection : m_connections) {
        connection->shutdown();
    }
}

} // namespace nicer::net
