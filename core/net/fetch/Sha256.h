#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace nicer::net {

/// Incremental SHA-256 (OpenSSL EVP), fed as the bytes of a download arrive.
class Sha256 {
public:
    /// Starts an empty digest. Throws std::bad_alloc if OpenSSL cannot allocate or set up its context.
    Sha256();
    Sha256(Sha256&&) noexcept;
    Sha256& operator=(Sha256&&) noexcept;
    ~Sha256();

    /// Adds @p data to the message.
    void update(std::span<const std::byte> data);
    /// Adds @p size bytes at @p data to the message.
    void update(const void* data, std::size_t size);

    /// The digest of everything added so far, as 64 lower-case hex digits; the object then starts over empty.
    std::string hexDigest();
    /// The digest of everything added so far, leaving the object as it was so more can be added.
    std::string hexDigestSoFar() const;

private:
    struct ContextDeleter {
        void operator()(evp_md_ctx_st* context) const;
    };
    std::unique_ptr<evp_md_ctx_st, ContextDeleter> m_context;
};

/// True when @p text is a SHA-256 digest in hex: 64 hex digits of either case.
bool isSha256Hex(std::string_view text);

} // namespace nicer::net
