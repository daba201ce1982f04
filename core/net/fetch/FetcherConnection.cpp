#include "net/fetch/FetcherConnection.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace nicer::net {

namespace {

std::string seconds(std::chrono::milliseconds duration) {
    const auto tenths = (duration.count() + 50) / 100;
    return std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "") + " s";
}

} // namespace

FetcherConnection::FetcherConnection(std::string origin, Endpoint endpoint, Owner& owner)
    : m_origin(std::move(origin))
    , m_endpoint(std::move(endpoint))
    , m_owner(owner) {}

FetcherConnection::~FetcherConnection() = default;

std::string FetcherConnection::originKey(const Url& url) {
    return url.scheme + "://" + url.authority() + ":" + std::to_string(url.port);
}

Result<std::unique_ptr<FetcherConnection>> FetcherConnection::open(sd_event* event, const Url& origin,
                                                                   std::shared_ptr<const TlsContext> tls,
                                                                   Owner& owner,
                                                                   const Http2Session::Options& session,
                                                                   const ConnectionOptions& connection) {
    const bool https = origin.scheme == "https";
    std::unique_ptr<FetcherConnection> self(
        new FetcherConnection(originKey(origin), Endpoint{origin.host, origin.port, https}, owner));
    auto created = Http2Session::create(*self, session);
    if (!created) {
        return created.error();
    }
    self->m_session = std::move(*created);
    auto opened = Connection::openWithContext(event, self->m_endpoint, https ? std::move(tls) : nullptr,
                                              *self, connection);
    if (!opened) {
        return opened.error();
    }
    self->m_connection = std::move(*opened);
    // The preface and SETTINGS go out as soon as the transport is up.
    self->flush();
    return self;
}

Result<std::int32_t> FetcherConnection::submit(const Http2Session::Request& request) {
    if (m_closed) {
        return Error{"the connection to " + m_endpoint.toString() + " is closed"};
    }
    if (m_session->activeStreams() == 0) {
        // The clocks start with the first stream, not at the last old byte.
        markProgress();
        m_rateWindowStart.reset();
    }
    auto stream = m_session->submitGet(request);
    if (stream) {
        flush();
    }
    return stream;
}

void FetcherConnection::resetStream(std::int32_t stream, std::uint32_t errorCode) {
    m_session->resetStream(stream, errorCode);
    flush();
}

std::size_t FetcherConnection::consume(std::int32_t stream, std::size_t n) {
    const std::size_t consumed = m_session->consume(stream, n);
    if (consumed > 0) {
        flush(); // a WINDOW_UPDATE may be due
    }
    return consumed;
}

std::size_t FetcherConnection::unconsumed(std::int32_t stream) const {
    return m_session->unconsumed(stream);
}

std::size_t FetcherConnection::unconsumedTotal() const {
    return m_session->unconsumedTotal();
}

void FetcherConnection::setWindows(std::uint32_t connectionWindow, std::span<const std::int32_t> streams,
                                   std::uint32_t streamWindow) {
    if (m_closed) {
        return;
    }
    // Failures mean the session is over, which the transport reports on its own.
    (void)m_session->setConnectionWindow(connectionWindow);
    for (const std::int32_t stream : streams) {
        (void)m_session->setStreamWindow(stream, streamWindow);
    }
    flush();
}

void FetcherConnection::ping() {
    if (!m_closed && m_everConnected) {
        m_session->ping();
        flush();
    }
}

void FetcherConnection::markProgress() {
    m_progress = true;
}

void FetcherConnection::checkStall(std::chrono::steady_clock::time_point now,
                                   std::chrono::milliseconds timeout, double minRate) {
    if (m_closed || timeout.count() <= 0) {
        return;
    }
    // Before the transport is up the connect timeout applies; while we hold back credit the server may
    // rightly be waiting for us.
    if (!m_everConnected || m_session->activeStreams() == 0 || m_session->unconsumedTotal() > 0) {
        m_progress = false;
        m_lastProgress = now;
        m_rateWindowStart = now;
        m_rateWindowBytes = 0;
        return;
    }
    if (std::exchange(m_progress, false) || !m_lastProgress) {
        m_lastProgress = now;
    }
    if (now - *m_lastProgress >= timeout) {
        const std::string wait = seconds(timeout);
        const std::string server = m_endpoint.toString();
        if (!m_session->peerSettingsReceived()) {
            fail(Error{"no HTTP/2 SETTINGS from " + server + " in " + wait +
                       " after connecting: it does not speak HTTP/2 on this port, or it is stuck"});
        } else if (!m_session->settingsAcknowledged()) {
            fail(Error{server + " did not acknowledge the HTTP/2 SETTINGS in " + wait +
                       " (SETTINGS_TIMEOUT): the server is stuck"});
        } else {
            fail(Error{"no data from " + server + " for " + wait + " while downloading: the server stalled"});
        }
        return;
    }
    if (minRate <= 0.0 || !m_rateWindowStart) {
        m_rateWindowStart = now;
        m_rateWindowBytes = 0;
        return;
    }
    const auto span = now - *m_rateWindowStart;
    if (span < timeout) {
        return;
    }
    // A trickle keeps the stall clock from ever running out; over a whole timeout it must also add up.
    const double required = minRate * std::chrono::duration<double>(span).count();
    if (static_cast<double>(m_rateWindowBytes) < required) {
        fail(Error{"only " + std::to_string(m_rateWindowBytes) + " bytes from " + m_endpoint.toString() +
                   " in " + seconds(std::chrono::duration_cast<std::chrono::milliseconds>(span)) +
                   " while downloading, below the minimum of " +
                   std::to_string(static_cast<std::uint64_t>(minRate)) + " bytes/s: the server is too slow"});
        return;
    }
    m_rateWindowStart = now;
    m_rateWindowBytes = 0;
}

void FetcherConnection::fail(Error reason) {
    if (m_closed) {
        return;
    }
    m_closed = true;
    m_error = std::move(reason);
    m_connection->close();
    m_session->connectionLost();
    m_owner.onConnectionChanged(*this);
}

void FetcherConnection::shutdown() {
    if (m_closed) {
        return;
    }
    m_session->shutdown();
    flush();
    if (!m_closed) {
        m_closed = true;
        m_connection->close();
        m_session->connectionLost();
    }
}

bool FetcherConnection::acceptsRequests() const {
    return !m_closed && m_session->acceptsRequests();
}

std::size_t FetcherConnection::activeStreams() const {
    return m_session->activeStreams();
}

std::size_t FetcherConnection::maxConcurrentStreams() const {
    const auto limit = m_session->remoteMaxConcurrentStreams();
    return std::min<std::size_t>(limit, std::numeric_limits<std::size_t>::max());
}

void FetcherConnection::flush() {
    if (m_closed || !m_connection) {
        return;
    }
    // Session callbacks may flush again from inside this loop; the outer loop then runs once more.
    if (m_flushing) {
        m_flushAgain = true;
        return;
    }
    m_flushing = true;
    do {
        m_flushAgain = false;
        for (;;) {
            const std::string_view out = m_session->output();
            if (out.empty() || m_closed) {
                break;
            }
            const auto taken = m_connection->send(
                std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(out.data()), out.size()));
            if (!taken) {
                m_flushing = false;
                fail(taken.error());
                return;
            }
            if (*taken == 0) {
                break; // the socket is full: onWritable() comes back
            }
            m_session->drainOutput(*taken);
        }
    } while (m_flushAgain && !m_closed);
    m_flushing = false;
    if (!m_closed && m_session->finished()) {
        // GOAWAY both ways and every stream done: nothing more will happen on this connection.
        m_closed = true;
        m_connection->close();
        m_owner.onConnectionChanged(*this);
    }
}

void FetcherConnection::onConnected(std::string_view /*alpn*/) {
    m_everConnected = true;
    markProgress();
    flush();
    m_owner.onConnectionChanged(*this);
}

void FetcherConnection::onBytes(std::span<const std::uint8_t> bytes) {
    const auto received = m_session->receive(bytes);
    if (!received) {
        // The session is over; a GOAWAY it queued is worth a try before the socket goes.
        const std::string_view out = m_session->output();
        if (!out.empty()) {
            (void)m_connection->send(
                std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(out.data()), out.size()));
        }
        fail(Error{received.error().message + " (" + m_endpoint.toString() + ")"});
        return;
    }
    flush();
}

void FetcherConnection::onWritable() {
    flush();
}

void FetcherConnection::onClosed(std::optional<ConnectionError> error) {
    if (m_closed) {
        return;
    }
    m_closed = true;
    if (error) {
        m_error = std::move(error->error);
        m_failedPermanently = error->permanent;
    } else if (m_session->activeStreams() > 0) {
        m_error =
            Error{"server " + m_endpoint.toString() + " closed the connection in the middle of a download"};
    }
    m_session->connectionLost();
    m_owner.onConnectionChanged(*this);
}

void FetcherConnection::onResponseHeaders(std::int32_t stream, int status,
                                          const Http2Session::Headers& headers) {
    markProgress();
    m_owner.onResponseHeaders(*this, stream, status, headers);
}

void FetcherConnection::onData(std::int32_t stream, std::span<const std::uint8_t> data) {
    markProgress();
    m_rateWindowBytes += data.size();
    m_owner.onData(*this, stream, data);
}

void FetcherConnection::onStreamClosed(std::int32_t stream, StreamEnd end) {
    markProgress();
    m_owner.onStreamClosed(*this, stream, end);
}

void FetcherConnection::onGoAway(std::int32_t /*lastStreamId*/, std::uint32_t /*errorCode*/) {
    m_goAway = true;
    m_owner.onConnectionChanged(*this);
}

void FetcherConnection::onPingAck(std::chrono::nanoseconds rtt) {
    m_owner.onPingAck(*this, rtt);
}

} // namespace nicer::net
