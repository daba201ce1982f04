#pragma once

#include "libsystemd/Event.h"
#include "libsystemd/IoSource.h"
#include "libsystemd/Timer.h"
#include "net/transport/ConnectionError.h"
#include "net/transport/Endpoint.h"
#include "net/transport/OpenSsl.h"
#include "net/transport/Resolver.h"
#include "net/transport/Socket.h"
#include "net/transport/SocketAddress.h"
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
#include <string_view>
#include <vector>

namespace nicer::net {

/// Limits of a Connection.
struct ConnectionOptions {
    /// Time for each address tried to accept the TCP connection and finish the TLS handshake; the same
    /// bound applies to name resolution. A refused or timed-out address falls back to the next one.
    std::chrono::milliseconds connectTimeout = std::chrono::seconds(30);
    /// Most bytes send() keeps queued; beyond that it accepts less and onWritable() says when to go on.
    std::size_t sendBufferLimit = 256 * 1024;
};

/// An outgoing byte stream on an sd-event loop: plain TCP (HTTP/2 with prior knowledge) or TLS that
/// verifies the server and insists on ALPN "h2". The transport under the HTTP/2 session.
///
/// Name resolution (IPv4 and IPv6, addresses tried in order), connecting, the TLS handshake, reading and
/// writing never block the loop. Listener callbacks come only from the loop, never from inside open(),
/// send() or the other calls, and a callback may destroy the Connection.
class Connection {
public:
    /// What happens on the connection. Each is called on the loop; any of them may destroy the Connection.
    class Listener {
    public:
        virtual ~Listener() = default;
        /// The stream is ready: connected and, with TLS, the server verified and ALPN @p alpn = "h2"; ""
        /// for plain TCP. Bytes queued by send() before now go out next.
        virtual void onConnected(std::string_view alpn) = 0;
        /// Bytes arrived, decrypted with TLS. Not called while reading is paused.
        virtual void onBytes(std::span<const std::uint8_t> bytes) = 0;
        /// Everything queued by send() has been handed to the kernel: there is room for more.
        virtual void onWritable() = 0;
        /// The connection is over: nullopt when the server closed it, else what ended it (failed
        /// resolution, connect, TLS verification, ALPN, a reset, a timeout), marked permanent when it is the
        /// server itself that cannot be used (certificate, ALPN). The last call; never made after close() or
        /// destruction.
        virtual void onClosed(std::optional<ConnectionError> error) = 0;
    };

    /// Starts connecting to @p endpoint on @p event's loop; the outcome arrives through @p listener, which
    /// must outlive the Connection. Fails at once only when the endpoint is invalid or the TLS setup fails
    /// (e.g. TlsOptions::caFile unreadable); everything that happens on the network comes as onClosed().
    static Result<std::unique_ptr<Connection>> open(sd_event* event, const Endpoint& endpoint,
                                                    const TlsOptions& tls, Listener& listener,
                                                    const ConnectionOptions& options = {});
    /// open() with a TlsContext shared by several connections, which loads the CA store once; @p tls may be
    /// null for a plain endpoint. (Another name, so that open(..., {}, ...) stays unambiguous.)
    static Result<std::unique_ptr<Connection>> openWithContext(sd_event* event, const Endpoint& endpoint,
                                                               std::shared_ptr<const TlsContext> tls,
                                                               Listener& listener,
                                                               const ConnectionOptions& options = {});

    /// Closes like close().
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    /// Queues @p data for sending without blocking and returns how much of it was taken: all of it while
    /// the queue is under ConnectionOptions::sendBufferLimit, less (possibly 0) beyond; onWritable() then
    /// says when the queue has drained. May be called before onConnected(). Fails once the connection is
    /// closed.
    Result<std::size_t> send(std::span<const std::uint8_t> data);
    /// Ends the connection now: a TLS close_notify if possible, queued bytes dropped, no further callbacks.
    void close();
    /// Stops (true) or resumes (false) reading, so that a slow consumer makes the server slow down through
    /// TCP flow control. While paused the stall timeout does not run.
    void pauseReading(bool paused);
    /// Fails the open connection with a "stalled" error when no byte arrives for @p timeout while reading
    /// is not paused; zero (the default) turns this off. The caller knows when data is due (streams open).
    void setStallTimeout(std::chrono::milliseconds timeout);

    /// Bytes received and sent on the wire, TLS records included.
    std::uint64_t bytesReceived() const { return m_socket.bytesReceived(); }
    std::uint64_t bytesSent() const { return m_socket.bytesSent(); }
    /// Bytes send() has queued that have not yet reached the kernel.
    std::size_t queuedBytes() const { return m_out.size() - m_outOffset; }
    /// True from onConnected() until the connection closes.
    bool isOpen() const { return m_state == State::Open; }
    const Endpoint& endpoint() const { return m_endpoint; }

private:
    enum class State { Idle, Resolving, Connecting, Handshaking, Open, Closed };
    struct Attempt {
        std::string address;
        int error = 0; // errno
    };

    Connection(sd_event* event, Endpoint endpoint, std::shared_ptr<const TlsContext> tls, Listener& listener,
               const ConnectionOptions& options);
    Result<void> start();
    /// The error handler of the loop's sources: an exception from a handler fails the connection, unless
    /// the handler destroyed it.
    libsystemd::ErrorHandler errorHandler();

    void onResolved(Result<std::vector<SocketAddress>> answer);
    void connectNext();
    void handleIo();
    void handleTimer();
    void handleKick();
    void startTls();
    void handshake();
    void becomeOpen(std::string alpn);
    void readPass();
    void flushOut();
    void updateEvents();

    void armTimer(std::chrono::milliseconds delay);
    void armStallTimer();
    libsystemd::Timer::Time now() const;
    void kick();

    /// Ends the connection and reports @p error (nullopt: closed by the server) through onClosed() from the
    /// loop's next iteration.
    void finish(std::optional<ConnectionError> error);
    void fail(ConnectionError error) { finish(std::move(error)); }
    /// fail() for a failure that may pass (refused, reset, timeout): not permanent.
    void fail(Error error) { finish(ConnectionError{std::move(error)}); }
    /// fail() for an exception from a handler of the loop's sources (their error handler); cannot throw.
    void failInternal(const char* what) noexcept;
    void teardown() noexcept;
    Error connectError() const;
    Error ioError(std::string_view during, int error) const;

    libsystemd::EventPtr m_event;
    Endpoint m_endpoint;
    std::shared_ptr<const TlsContext> m_tls;
    Listener* m_listener;
    ConnectionOptions m_options;
    // Shared with every callback frame: set false by the destructor, so a frame whose listener call
    // destroyed the Connection stops touching it.
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);

    State m_state = State::Idle;
    std::unique_ptr<Resolver> m_resolver;
    std::vector<SocketAddress> m_addresses;
    std::size_t m_nextAddress = 0;
    std::vector<Attempt> m_attempts;
    std::string m_peer;

    Socket m_socket;
    SslPtr m_ssl;
    libsystemd::IoSource m_io;
    libsystemd::Timer m_timer;
    libsystemd::Defer m_kick; // defers work to the loop's next iteration
    std::uint32_t m_ioEvents = 0;
    std::uint32_t m_handshakeEvents = 0;
    std::string m_alpn;

    std::vector<std::uint8_t> m_out;
    std::size_t m_outOffset = 0;
    bool m_readPaused = false;
    bool m_readPending = false; // a read pass is due from the kick (resume, or the budget ran out)
    bool m_sslReadWantsWrite = false;
    bool m_sslWriteWantsRead = false;
    bool m_closePending = false;
    std::optional<ConnectionError> m_closeError;

    std::chrono::milliseconds m_stallTimeout{0};
    libsystemd::Timer::Time m_lastReceive{0}; // on CLOCK_MONOTONIC
};

} // namespace nicer::net
