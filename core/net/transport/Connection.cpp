#include "net/transport/Connection.h"

#include "net/transport/SocketBio.h"
#include "net/transport/TlsErrors.h"

#include <climits>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/epoll.h>

namespace nicer::net {

namespace {

// Most bytes one read pass hands to the listener before yielding to other sources of the loop.
constexpr std::size_t kReadBudget = 256 * 1024;

std::string seconds(std::chrono::milliseconds duration) {
    char text[32];
    std::snprintf(text, sizeof text, "%g s", static_cast<double>(duration.count()) / 1000.0);
    return text;
}

bool wouldBlock(int error) {
    return error == EAGAIN || error == EWOULDBLOCK;
}

} // namespace

Result<std::unique_ptr<Connection>> Connection::open(sd_event* event, const Endpoint& endpoint,
                                                     const TlsOptions& tls, Listener& listener,
                                                     const ConnectionOptions& options) {
    std::shared_ptr<const TlsContext> context;
    if (endpoint.tls) {
        auto created = TlsContext::create(tls);
        if (!created) {
            return created.error();
        }
        context = std::move(*created);
    }
    return openWithContext(event, endpoint, std::move(context), listener, options);
}

Result<std::unique_ptr<Connection>> Connection::openWithContext(sd_event* event, const Endpoint& endpoint,
                                                                std::shared_ptr<const TlsContext> tls,
                                                                Listener& listener,
                                                                const ConnectionOptions& options) {
    Endpoint target = endpoint;
    if (target.host.size() > 2 && target.host.front() == '[' && target.host.back() == ']') {
        target.host = target.host.substr(1, target.host.size() - 2); // "[::1]" as written in URLs
    }
    if (target.host.empty()) {
        return Error{"cannot connect: no host given"};
    }
    if (target.port == 0) {
        return Error{"cannot connect to " + target.host + ": port 0 is not a port to connect to"};
    }
    if (options.connectTimeout.count() <= 0) {
        return Error{"cannot connect to " + target.toString() + ": the connect timeout must be positive"};
    }
    if (target.tls && !tls) {
        auto created = TlsContext::create({});
        if (!created) {
            return created.error();
        }
        tls = std::move(*created);
    }
    auto self = std::unique_ptr<Connection>(
        new Connection(event, std::move(target), std::move(tls), listener, options));
    if (auto started = self->start(); !started) {
        return started.error();
    }
    return self;
}

Connection::Connection(sd_event* event, Endpoint endpoint, std::shared_ptr<const TlsContext> tls,
                       Listener& listener, const ConnectionOptions& options)
    : m_event(sd_event_ref(event))
    , m_endpoint(std::move(endpoint))
    , m_tls(std::move(tls))
    , m_listener(&listener)
    , m_options(options) {}

Connection::~Connection() {
    *m_alive = false;
    close();
}

libsystemd::ErrorHandler Connection::errorHandler() {
    // A handler may destroy this connection, so a failure is reported only while it is still alive.
    return [this, alive = m_alive](std::string_view what) {
        if (*alive) {
            failInternal(std::string(what).c_str());
        }
    };
}

Result<void> Connection::start() {
    const auto onError = errorHandler();
    auto kick = libsystemd::Defer::create(m_event.get(), [this] { handleKick(); });
    auto timer = libsystemd::Timer::create(
        m_event.get(), [this] { handleTimer(); }, CLOCK_MONOTONIC, std::chrono::microseconds(0));
    if (!kick || !timer) {
        return Error{"cannot connect to " + m_endpoint.toString() + ": " +
                     (kick ? timer.error() : kick.error()).message};
    }
    m_kick = std::move(*kick);
    m_kick.setErrorHandler(onError);
    m_timer = std::move(*timer);
    m_timer.setErrorHandler(onError);

    if (auto literal = SocketAddress::fromLiteral(m_endpoint.host, m_endpoint.port)) {
        m_addresses.push_back(*literal);
        connectNext();
        return {};
    }
    auto resolver =
        Resolver::start(m_event.get(), m_endpoint.host, m_endpoint.port,
                        [this](Result<std::vector<SocketAddress>> answer) { onResolved(std::move(answer)); });
    if (!resolver) {
        return resolver.error();
    }
    m_resolver = std::move(*resolver);
    m_resolver->setErrorHandler(onError);
    m_state = State::Resolving;
    armTimer(m_options.connectTimeout);
    return {};
}

void Connection::onResolved(Result<std::vector<SocketAddress>> answer) {
    m_resolver.reset(); // inside its own callback, which Resolver allows
    if (!answer) {
        fail(answer.error());
        return;
    }
    m_addresses = std::move(*answer);
    connectNext();
}

void Connection::connectNext() {
    m_io = {};
    m_socket.close();
    while (m_nextAddress < m_addresses.size()) {
        const SocketAddress& address = m_addresses[m_nextAddress++];
        m_peer = address.text();
        auto socket = Socket::create(address.family());
        if (!socket) {
            fail(Error{"cannot connect to " + m_endpoint.toString() + ": " + socket.error().message});
            return;
        }
        if (const int error = socket->connect(address); error != 0) {
            m_attempts.push_back({m_peer, error}); // e.g. ENETUNREACH for IPv6 without a route
            continue;
        }
        m_socket = std::move(*socket);
        // Connected or not, completion is reported as writability, so the listener hears of it from the
        // loop and never from inside open().
        auto io = libsystemd::IoSource::create(m_event.get(), m_socket.fd(), EPOLLOUT,
                                               [this](std::uint32_t) { handleIo(); });
        if (!io) {
            fail(Error{"cannot connect to " + m_endpoint.toString() + ": " + io.error().message});
            return;
        }
        m_io = std::move(*io);
        m_io.setErrorHandler(errorHandler());
        m_ioEvents = EPOLLOUT;
        m_state = State::Connecting;
        armTimer(m_options.connectTimeout);
        return;
    }
    fail(connectError());
}

Error Connection::connectError() const {
    std::string tried;
    for (const Attempt& attempt : m_attempts) {
        tried += (tried.empty() ? "" : "; ") + attempt.address + ": " + std::strerror(attempt.error);
    }
    const int last = m_attempts.empty() ? 0 : m_attempts.back().error;
    std::string hint;
    switch (last) {
    case ECONNREFUSED:
        hint = "is the server running, and is the port right?";
        break;
    case ETIMEDOUT:
        hint =
            "no answer within " + seconds(m_options.connectTimeout) + "; check the network and any firewall";
        break;
    default:
        hint = "check the network connection";
        break;
    }
    return Error{"cannot connect to " + m_endpoint.toString() + " (" + tried + "): " + hint};
}

Error Connection::ioError(std::string_view during, int error) const {
    return Error{"connection to " + m_endpoint.toString() + " (" + m_peer + ") failed while " +
                 std::string(during) + ": " + std::strerror(error)};
}

void Connection::handleIo() {
    switch (m_state) {
    case State::Connecting:
        if (const int error = m_socket.pendingError(); error != 0) {
            m_attempts.push_back({m_peer, error});
            connectNext();
        } else if (m_endpoint.tls) {
            startTls();
        } else {
            becomeOpen("");
        }
        return;
    case State::Handshaking:
        handshake();
        return;
    case State::Open: {
        // Level-triggered: try both directions whatever woke us; each stops at EAGAIN, so nothing is missed
        // when TLS needs the other direction (a write waiting on a read or the reverse).
        const auto alive = m_alive;
        if (queuedBytes() > 0) {
            flushOut();
            if (!*alive || m_state != State::Open) {
                return;
            }
        }
        if (!m_readPaused) {
            readPass();
            if (!*alive || m_state != State::Open) {
                return;
            }
        }
        updateEvents();
        return;
    }
    default:
        return;
    }
}

void Connection::startTls() {
    ERR_clear_error();
    m_ssl.reset(SSL_new(m_tls->get()));
    BIO* bio = m_ssl ? newSocketBio(m_socket) : nullptr;
    if (!bio) {
        fail(Error{"TLS: cannot set up the connection to " + m_endpoint.toString() + ": " +
                   takeOpenSslErrors()});
        return;
    }
    SSL_set_bio(m_ssl.get(), bio, bio); // the SSL owns the BIO from here
    const bool ipLiteral = SocketAddress::fromLiteral(m_endpoint.host, m_endpoint.port).has_value();
    bool configured = false;
    if (ipLiteral) {
        // No SNI for addresses (RFC 6066); the certificate must list the address itself.
        configured = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(m_ssl.get()), m_endpoint.host.c_str()) == 1;
    } else {
        SSL_set_hostflags(m_ssl.get(), X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        // SSL_set_tlsext_host_name() spelled out: the macro's C cast trips -Wold-style-cast.
        configured = SSL_ctrl(m_ssl.get(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                              const_cast<char*>(m_endpoint.host.c_str())) == 1 &&
                     SSL_set1_host(m_ssl.get(), m_endpoint.host.c_str()) == 1;
    }
    if (!configured) {
        fail(Error{"TLS: cannot check certificates for the host name \"" + m_endpoint.host +
                   "\": " + takeOpenSslErrors()});
        return;
    }
    SSL_set_connect_state(m_ssl.get());
    m_state = State::Handshaking;
    handshake();
}

void Connection::handshake() {
    ERR_clear_error();
    errno = 0;
    const int r = SSL_do_handshake(m_ssl.get());
    if (r == 1) {
        const unsigned char* selected = nullptr;
        unsigned int length = 0;
        SSL_get0_alpn_selected(m_ssl.get(), &selected, &length);
        const std::string alpn = selected ? std::string(reinterpret_cast<const char*>(selected), length) : "";
        if (alpn != "h2") {
            fail(alpnError(m_endpoint, alpn));
            return;
        }
        becomeOpen(alpn);
        return;
    }
    const int systemErrno = errno;
    const int error = SSL_get_error(m_ssl.get(), r);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
        m_handshakeEvents = error == SSL_ERROR_WANT_READ ? EPOLLIN : EPOLLOUT;
        updateEvents();
        return;
    }
    fail(tlsHandshakeError(m_ssl.get(), error, systemErrno, m_endpoint));
}

void Connection::becomeOpen(std::string alpn) {
    m_state = State::Open;
    m_alpn = std::move(alpn);
    m_lastReceive = now();
    armStallTimer();
    const auto alive = m_alive;
    m_listener->onConnected(m_alpn);
    if (!*alive || m_state != State::Open) {
        return;
    }
    // Bytes queued before the connection was up, and TLS records the handshake already read into OpenSSL's
    // buffer (the kernel will not wake us for those).
    handleIo();
}

void Connection::readPass() {
    const auto alive = m_alive;
    std::array<std::uint8_t, 16384> buffer{};
    std::size_t budget = kReadBudget;
    m_sslReadWantsWrite = false;
    while (m_state == State::Open && !m_readPaused) {
        if (budget == 0) {
            m_readPending = true; // let the loop's other sources run, then go on
            kick();
            return;
        }
        std::size_t received = 0;
        if (m_ssl) {
            ERR_clear_error();
            errno = 0;
            const int r = SSL_read(m_ssl.get(), buffer.data(), static_cast<int>(buffer.size()));
            if (r <= 0) {
                const int systemErrno = errno;
                switch (SSL_get_error(m_ssl.get(), r)) {
                case SSL_ERROR_WANT_READ:
                    return;
                case SSL_ERROR_WANT_WRITE:
                    m_sslReadWantsWrite = true;
                    return;
                case SSL_ERROR_ZERO_RETURN:
                    finish(std::nullopt);
                    return;
                case SSL_ERROR_SYSCALL:
                    if (systemErrno == 0) {
                        finish(std::nullopt); // end of stream without close_notify
                    } else {
                        fail(ioError("receiving", systemErrno));
                    }
                    return;
                default:
                    fail(Error{"TLS error on the connection to " + m_endpoint.toString() + ": " +
                               takeOpenSslErrors()});
                    return;
                }
            }
            received = static_cast<std::size_t>(r);
        } else {
            const ssize_t n = m_socket.receive(buffer);
            if (n == 0) {
                finish(std::nullopt);
                return;
            }
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                if (!wouldBlock(errno)) {
                    fail(ioError("receiving", errno));
                }
                return;
            }
            received = static_cast<std::size_t>(n);
        }
        budget -= std::min(budget, received);
        m_lastReceive = now();
        m_listener->onBytes(std::span<const std::uint8_t>(buffer.data(), received));
        if (!*alive) {
            return;
        }
    }
}

void Connection::flushOut() {
    m_sslWriteWantsRead = false;
    while (m_outOffset < m_out.size()) {
        const std::size_t pending = m_out.size() - m_outOffset;
        std::size_t written = 0;
        if (m_ssl) {
            ERR_clear_error();
            errno = 0;
            const int r = SSL_write(m_ssl.get(), m_out.data() + m_outOffset,
                                    static_cast<int>(std::min<std::size_t>(pending, INT_MAX)));
            if (r <= 0) {
                const int systemErrno = errno;
                switch (SSL_get_error(m_ssl.get(), r)) {
                case SSL_ERROR_WANT_WRITE:
                    return;
                case SSL_ERROR_WANT_READ:
                    m_sslWriteWantsRead = true;
                    return;
                case SSL_ERROR_SYSCALL:
                    fail(ioError("sending", systemErrno != 0 ? systemErrno : EPIPE));
                    return;
                default:
                    fail(Error{"TLS error on the connection to " + m_endpoint.toString() + ": " +
                               takeOpenSslErrors()});
                    return;
                }
            }
            written = static_cast<std::size_t>(r);
        } else {
            const ssize_t n = m_socket.send({m_out.data() + m_outOffset, pending});
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                if (!wouldBlock(errno)) {
                    fail(ioError("sending", errno));
                }
                return;
            }
            written = static_cast<std::size_t>(n);
        }
        m_outOffset += written;
    }
    m_out.clear();
    m_outOffset = 0;
    m_listener->onWritable();
}

void Connection::updateEvents() {
    if (!m_io) {
        return;
    }
    std::uint32_t events = 0;
    switch (m_state) {
    case State::Connecting:
        events = EPOLLOUT;
        break;
    case State::Handshaking:
        events = m_handshakeEvents;
        break;
    case State::Open:
        // Each direction waits for what TLS says it needs; with nothing to read (paused) or write, the
        // source goes off entirely, so a hung-up socket cannot spin the loop while paused.
        if (!m_readPaused) {
            events |= m_sslReadWantsWrite ? EPOLLOUT : EPOLLIN;
        }
        if (queuedBytes() > 0) {
            events |= m_sslWriteWantsRead ? EPOLLIN : EPOLLOUT;
        }
        break;
    default:
        break;
    }
    if (events == 0) {
        m_io.setEnabled(false);
        return;
    }
    if (events != m_ioEvents) {
        m_io.setEvents(events);
        m_ioEvents = events;
    }
    m_io.setEnabled(true);
}

Result<std::size_t> Connection::send(std::span<const std::uint8_t> data) {
    if (m_state == State::Closed) {
        return Error{"cannot send to " + m_endpoint.toString() + ": the connection is closed"};
    }
    const std::size_t queued = queuedBytes();
    const std::size_t room = m_options.sendBufferLimit > queued ? m_options.sendBufferLimit - queued : 0;
    const std::size_t taken = std::min(room, data.size());
    if (taken == 0) {
        return std::size_t{0};
    }
    if (m_outOffset > 0 && m_outOffset >= m_out.size() / 2) {
        // The unsent tail moves to the front; SSL_write accepts a moved buffer with the same bytes.
        m_out.erase(m_out.begin(), m_out.begin() + static_cast<std::ptrdiff_t>(m_outOffset));
        m_outOffset = 0;
    }
    m_out.insert(m_out.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(taken));
    // Written when the loop finds the socket writable: one pass gathers everything the caller sent
    // meanwhile, and the listener is never re-entered from inside send().
    if (m_state == State::Open) {
        updateEvents();
    }
    return taken;
}

void Connection::close() {
    if (m_state == State::Open && m_ssl) {
        ERR_clear_error();
        SSL_shutdown(m_ssl.get()); // best effort: one close_notify if the socket takes it now
        ERR_clear_error();
    }
    teardown();
    m_closePending = false;
    m_closeError.reset();
    m_kick.cancel();
}

void Connection::pauseReading(bool paused) {
    if (m_readPaused == paused) {
        return;
    }
    m_readPaused = paused;
    if (m_state != State::Open) {
        return;
    }
    if (!paused) {
        m_lastReceive = now(); // the pause was ours: the stall clock starts again
        // OpenSSL may hold decrypted bytes the kernel knows nothing about: read them from the loop.
        m_readPending = true;
        kick();
    }
    updateEvents();
}

void Connection::setStallTimeout(std::chrono::milliseconds timeout) {
    m_stallTimeout = timeout;
    if (m_state == State::Open) {
        armStallTimer();
    }
}

void Connection::handleTimer() {
    switch (m_state) {
    case State::Resolving:
        fail(Error{"cannot resolve host name \"" + m_endpoint.host + "\": no answer within " +
                   seconds(m_options.connectTimeout) + "; check the network and DNS"});
        return;
    case State::Connecting:
        m_attempts.push_back({m_peer, ETIMEDOUT});
        connectNext();
        return;
    case State::Handshaking:
        fail(Error{"TLS handshake with " + m_endpoint.toString() + " did not finish within " +
                   seconds(m_options.connectTimeout) + "; check the network, and that the port serves TLS"});
        return;
    case State::Open:
        if (m_stallTimeout.count() <= 0) {
            return;
        }
        if (m_readPaused) {
            m_lastReceive = now();
        } else if (now() - m_lastReceive >= m_stallTimeout) {
            fail(Error{"no data from " + m_endpoint.toString() + " for " + seconds(m_stallTimeout) +
                       ": the connection stalled"});
            return;
        }
        armStallTimer();
        return;
    default:
        return;
    }
}

void Connection::handleKick() {
    if (m_closePending) {
        m_closePending = false;
        std::optional<ConnectionError> error = std::move(m_closeError);
        m_closeError.reset();
        m_listener->onClosed(std::move(error)); // the last call: it may well destroy us
        return;
    }
    if (m_readPending && m_state == State::Open && !m_readPaused) {
        m_readPending = false;
        const auto alive = m_alive;
        readPass();
        if (*alive && m_state == State::Open) {
            updateEvents();
        }
    }
}

void Connection::armTimer(std::chrono::milliseconds delay) {
    m_timer.armIn(delay);
}

void Connection::armStallTimer() {
    if (m_stallTimeout.count() <= 0) {
        m_timer.disarm();
        return;
    }
    m_timer.armAt(m_lastReceive + m_stallTimeout);
}

libsystemd::Timer::Time Connection::now() const {
    return m_timer.now();
}

void Connection::kick() {
    m_kick.trigger();
}

void Connection::finish(std::optional<ConnectionError> error) {
    if (m_state == State::Closed) {
        return;
    }
    teardown();
    m_closeError = std::move(error);
    m_closePending = true;
    kick();
}

void Connection::failInternal(const char* what) noexcept {
    try {
        fail(Error{"connection to " + m_endpoint.toString() + " failed: internal error: " + what});
    } catch (...) {
        // Out of memory even for the message: still end the connection and report it, without text.
        teardown();
        m_closeError.emplace();
        m_closePending = true;
        kick();
    }
}

void Connection::teardown() noexcept {
    m_state = State::Closed;
    m_resolver.reset();
    m_io = {};
    m_ssl.reset(); // before the socket: its BIO points at it
    m_socket.close();
    m_timer.disarm();
    m_out.clear();
    m_outOffset = 0;
    m_readPending = false;
}

} // namespace nicer::net
