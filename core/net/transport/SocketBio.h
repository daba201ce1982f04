#pragma once

#include <openssl/bio.h>

namespace nicer::net {

class Socket;

/// A new BIO that moves TLS records through @p socket, which must outlive it; SSL_set_bio() takes it over.
/// nullptr when OpenSSL cannot allocate one.
///
/// Why not SSL_set_fd(): OpenSSL's socket BIO calls write(), so a server that resets the connection would
/// kill the whole process with SIGPIPE; this one uses send(MSG_NOSIGNAL), and Socket counts the bytes on the
/// wire as it goes.
BIO* newSocketBio(Socket& socket);

} // namespace nicer::net
