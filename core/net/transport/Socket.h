#pragma once

#include "net/transport/SocketAddress.h"
#include "util/Result.h"
#include "util/UniqueFd.h"

#include <cstdint>
#include <span>
#include <sys/types.h>
#include <utility>

namespace nicer::net {

/// A non-blocking TCP socket that counts the bytes it moves and never raises SIGPIPE.
class Socket {
public:
    Socket() = default;

    /// A new non-blocking, close-on-exec TCP socket for @p family (AF_INET or AF_INET6), Nagle off.
    static Result<Socket> create(int family);

    int fd() const { return m_fd.get(); }
    bool isOpen() const { return m_fd.valid(); }

    /// Starts connecting to @p address: 0 when under way or done (wait for EPOLLOUT, then ask
    /// pendingError()), else the errno that says why not.
    int connect(const SocketAddress& address);
    /// What a finished non-blocking connect ended with (SO_ERROR): 0 when connected, else an errno.
    int pendingError() const;

    /// recv(): bytes read, 0 at end of stream, -1 with errno set (EAGAIN when there is nothing now).
    ssize_t receive(std::span<std::uint8_t> buffer);
    /// send() with MSG_NOSIGNAL: bytes written, or -1 with errno set (EAGAIN when the kernel buffer is full).
    ssize_t send(std::span<const std::uint8_t> data);

    /// Closes the descriptor; the byte counts stay.
    void close() { m_fd.reset(); }

    /// Bytes received and sent on the wire (TLS records included), since create().
    std::uint64_t bytesReceived() const { return m_received; }
    std::uint64_t bytesSent() const { return m_sent; }

private:
    explicit Socket(UniqueFd fd)
        : m_fd(std::move(fd)) {}

    UniqueFd m_fd;
    std::uint64_t m_received = 0;
    std::uint64_t m_sent = 0;
};

} // namespace nicer::net
