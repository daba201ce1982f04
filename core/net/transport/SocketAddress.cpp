#include "net/transport/SocketAddress.h"

#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>

namespace nicer::net {

std::string SocketAddress::text() const {
    char buffer[INET6_ADDRSTRLEN] = {};
    if (family() == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(&storage);
        ::inet_ntop(AF_INET, &in->sin_addr, buffer, sizeof buffer);
    } else if (family() == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&storage);
        ::inet_ntop(AF_INET6, &in6->sin6_addr, buffer, sizeof buffer);
    }
    return buffer;
}

std::optional<SocketAddress> SocketAddress::fromLiteral(std::string_view host, std::uint16_t port) {
    const std::string text(host);
    SocketAddress address;
    auto* in = reinterpret_cast<sockaddr_in*>(&address.storage);
    if (::inet_pton(AF_INET, text.c_str(), &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        address.length = sizeof(sockaddr_in);
        return address;
    }
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
    if (::inet_pton(AF_INET6, text.c_str(), &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        address.length = sizeof(sockaddr_in6);
        return address;
    }
    return std::nullopt;
}

std::optional<SocketAddress> SocketAddress::fromSockaddr(const sockaddr* source, socklen_t length) {
    if (!source || (source->sa_family != AF_INET && source->sa_family != AF_INET6) || length <= 0 ||
        static_cast<std::size_t>(length) > sizeof(sockaddr_storage)) {
        return std::nullopt;
    }
    SocketAddress address;
    std::memcpy(&address.storage, source, static_cast<std::size_t>(length));
    address.length = length;
    return address;
}

} // namespace nicer::net
