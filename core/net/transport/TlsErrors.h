#pragma once

#include "net/transport/ConnectionError.h"
#include "net/transport/Endpoint.h"

#include <openssl/ssl.h>

#include <string_view>

namespace nicer::net {

/// Why the TLS handshake of @p ssl with @p endpoint failed, worded for a user: an untrusted or mismatched
/// certificate names the host and says what to do. @p sslError is SSL_get_error()'s answer and
/// @p systemErrno the errno right after the call; the OpenSSL error queue is read and emptied. Permanent when
/// the certificate failed verification or the server refused every ALPN protocol offered; a reset, a timeout
/// or a port that does not speak TLS may be passing and is not.
ConnectionError tlsHandshakeError(const SSL* ssl, int sslError, int systemErrno, const Endpoint& endpoint);

/// The error for a server that completed the handshake without selecting ALPN "h2" (@p selected is what it
/// chose, empty for nothing). Always permanent: the server will not start speaking HTTP/2 by itself.
ConnectionError alpnError(const Endpoint& endpoint, std::string_view selected);

} // namespace nicer::net
