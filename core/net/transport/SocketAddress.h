#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/socket.h>

namespace nicer::net {

/// An IPv4 or IPv6 address with a port, as connect() takes it.
struct SocketAddress {
    sockaddr_storage storage{};
    socklen_t length = 0;

    int family() const { return storage.ss_family; }
    const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
    /// The address without the port, as written in messages ("127.0.0.1", "::1").
    std::string text() const;

    /// The address @p host stands for when it is an IPv4 or IPv6 literal (no brackets); nullopt for a name.
    static std::optional<SocketAddress> fromLiteral(std::string_view host, std::uint16_t port);
    /// Copies one getaddrinfo() result; nullopt for families other than IPv4 and IPv6.
    static std::optional<SocketAddress> fromSockaddr(const sockaddr* address, socklen_t length);
};

} // namespace nicer::net
