#pragma once

#include "net/transport/OpenSsl.h"
#include "util/Result.h"

#include <openssl/ssl.h>

#include <filesystem>
#include <memory>
#include <optional>

namespace nicer::net {

/// How TLS connections verify servers. There is deliberately no way to turn verification off.
struct TlsOptions {
    /// A PEM file of extra CA certificates to trust, in addition to the system store (--ca-file), for
    /// servers whose certificates a private CA signed.
    std::optional<std::filesystem::path> caFile;
};

/// The client side of TLS shared by connections: TLS 1.2 or newer, the system CA store plus the optional
/// extra CA file, peer verification on, ALPN offering only "h2".
class TlsContext {
public:
    /// Fails when the extra CA file cannot be read or holds no certificate, or OpenSSL cannot set up.
    static Result<std::shared_ptr<const TlsContext>> create(const TlsOptions& options);

    SSL_CTX* get() const { return m_context.get(); }

private:
    explicit TlsContext(SslCtxPtr context)
        : m_context(std::move(context)) {}

    SslCtxPtr m_context;
};

} // namespace nicer::net
