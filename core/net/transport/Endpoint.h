#pragma once

#include <cstdint>
#include <string>

namespace nicer::net {

/// Where a Connection goes: a host name or IP literal (an IPv6 literal without brackets), a TCP port, and
/// whether to speak TLS there (https) or plain HTTP/2 with prior knowledge (http).
struct Endpoint {
    std::string host;
    std::uint16_t port = 0;
    bool tls = true;

    /// host:port for messages, with brackets around an IPv6 literal ("[::1]:8443").
    std::string toString() const {
        const bool ipv6 = host.find(':') != std::string::npos;
        return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
    }
};

} // namespace nicer::net
