#pragma once

// RAII for OpenSSL handles used by the transport, and the text of OpenSSL's error queue.

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <memory>
#include <string>

namespace nicer::net {

struct SslDeleter {
    void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
};
struct SslCtxDeleter {
    void operator()(SSL_CTX* context) const noexcept { SSL_CTX_free(context); }
};

using SslPtr = std::unique_ptr<SSL, SslDeleter>;
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxDeleter>;

/// The reasons in this thread's OpenSSL error queue, oldest first and joined by "; ", and the queue emptied
/// (a stale entry would be blamed on the next, unrelated TLS call). "unknown error" when it is empty.
inline std::string takeOpenSslErrors() {
    std::string text;
    while (const unsigned long code = ERR_get_error()) {
        const char* reason = ERR_reason_error_string(code);
        if (!text.empty()) {
            text += "; ";
        }
        text += reason ? reason : ERR_error_string(code, nullptr);
    }
    return text.empty() ? "unknown error" : text;
}

} // namespace nicer::net
