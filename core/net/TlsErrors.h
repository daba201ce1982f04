#pragma once

#include "net/Endpoint.h"
#include "util/Result.h"

#include <openssl/ssl.h>

#include <string_view>

namespace nicer::net {

/// Why the TLS handshake of @p ssl with @p endpoint failed, worded for a user: an untrusted or mismatched
/// certificate names the host and says what to do. @p sslError is SSL_get_error()'s answer and
/// @p systemErrno the errno right after the call; the OpenSSL error queue is read and emptied.
Error tlsHandshakeError(const SSL* ssl, int sslError, int systemErrno, const Endpoint& endpoint);

/// The error for a server that completed the handshake without selecting ALPN "h2" (@p selected is what it
/// chose, empty for nothing).
Error alpnError(const Endpoint& endpoint, std::string_view selected);

} // namespace nicer::net
