#include "net/transport/Socket.h"

#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string>
#include <sys/socket.h>

namespace nicer::net {

Result<Socket> Socket::create(int family) {
    UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP));
    if (!fd) {
        return Error{std::string("cannot create a TCP socket: ") + std::strerror(errno)};
    }
    // HTTP/2 sends small control frames (SETTINGS ACK, WINDOW_UPDATE, PING) whose delay would distort flow
    // control and RTT measurement; Nagle would hold them back.
    const int on = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    return Socket(std::move(fd));
}

int Socket::connect(const SocketAddress& address) {
    if (::connect(m_fd.get(), address.get(), address.length) == 0 || errno == EINPROGRESS) {
        return 0;
    }
    return errno;
}

int Socket::pendingError() const {
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(m_fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) < 0) {
        return errno;
    }
    return error;
}

ssize_t Socket::receive(std::span<std::uint8_t> buffer) {
    const ssize_t n = ::recv(m_fd.get(), buffer.data(), buffer.size(), 0);
    if (n > 0) {
        m_received += static_cast<std::uint64_t>(n);
    }
    return n;
}

ssize_t Socket::send(std::span<const std::uint8_t> data) {
    const ssize_t n = ::send(m_fd.get(), data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
        m_sent += static_cast<std::uint64_t>(n);
    }
    return n;
}

} // namespace nicer::net
