#include "net/transport/TlsContext.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace nicer::net {

namespace {

// ALPN wire format: length-prefixed names. Only h2: the fetcher speaks nothing else, and offering
// http/1.1 would only let a server pick something we would then refuse.
constexpr unsigned char kAlpnH2[] = {2, 'h', '2'};

} // namespace

Result<std::shared_ptr<const TlsContext>> TlsContext::create(const TlsOptions& options) {
    ERR_clear_error();
    SslCtxPtr context(SSL_CTX_new(TLS_client_method()));
    if (!context) {
        return Error{"TLS: cannot set up OpenSSL: " + takeOpenSslErrors()};
    }
    SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
    SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_set_default_verify_paths(context.get()) != 1) {
        return Error{"TLS: cannot load the system's CA certificates: " + takeOpenSslErrors() +
                     "; check that the ca-certificates package is installed"};
    }
    if (options.caFile) {
        const std::string path = options.caFile->string();
        // Checked first so a typo says "no such file" rather than an OpenSSL PEM error.
        if (!std::ifstream(path).good()) {
            return Error{"TLS: cannot read the CA file " + path + ": " + std::strerror(errno) +
                         "; check the path given with --ca-file"};
        }
        if (SSL_CTX_load_verify_locations(context.get(), path.c_str(), nullptr) != 1) {
            return Error{"TLS: the CA file " + path + " holds no usable certificate (" + takeOpenSslErrors() +
                         "); --ca-file needs PEM certificates"};
        }
    }
    // Partial writes and a moving buffer: Connection retries SSL_write from a send buffer that may grow or
    // be compacted in between.
    SSL_CTX_set_mode(context.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // A server that closes without close_notify ends the stream like a plain TCP close: HTTP/2 framing and
    // the downloads' hashes catch truncation, and many servers skip close_notify.
    SSL_CTX_set_options(context.get(), SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
    if (SSL_CTX_set_alpn_protos(context.get(), kAlpnH2, sizeof kAlpnH2) != 0) { // 0 means success here
        return Error{"TLS: cannot set up ALPN: " + takeOpenSslErrors()};
    }
    return std::shared_ptr<const TlsContext>(new TlsContext(std::move(context)));
}

} // namespace nicer::net
