#include "net/fetch/Sha256.h"

#include "util/Text.h"

#include <openssl/evp.h>

#include <array>
#include <new>
#include <span>

namespace nicer::net {

namespace {

void initialise(EVP_MD_CTX* context) {
    if (EVP_DigestInit_ex(context, EVP_sha256(), nullptr) != 1) {
        throw std::bad_alloc(); // SHA-256 is always built in: only a lack of memory gets here
    }
}

std::string finish(EVP_MD_CTX* context) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int size = 0;
    if (EVP_DigestFinal_ex(context, digest.data(), &size) != 1) {
        throw std::bad_alloc();
    }
    return text::lowerHex(std::span(digest.data(), size));
}

} // namespace

void Sha256::ContextDeleter::operator()(evp_md_ctx_st* context) const {
    EVP_MD_CTX_free(context);
}

Sha256::Sha256()
    : m_context(EVP_MD_CTX_new()) {
    if (!m_context) {
        throw std::bad_alloc();
    }
    initialise(m_context.get());
}

Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
Sha256::~Sha256() = default;

void Sha256::update(std::span<const std::byte> data) {
    update(data.data(), data.size());
}

void Sha256::update(const void* data, std::size_t size) {
    if (size > 0) {
        EVP_DigestUpdate(m_context.get(), data, size); // cannot fail for an initialised software digest
    }
}

std::string Sha256::hexDigest() {
    auto hex = finish(m_context.get());
    initialise(m_context.get());
    return hex;
}

std::string Sha256::hexDigestSoFar() const {
    std::unique_ptr<EVP_MD_CTX, ContextDeleter> copy(EVP_MD_CTX_new());
    if (!copy || EVP_MD_CTX_copy_ex(copy.get(), m_context.get()) != 1) {
        throw std::bad_alloc();
    }
    return finish(copy.get());
}

bool isSha256Hex(std::string_view text) {
    if (text.size() != 64) {
        return false;
    }
    for (const char c : text) {
        const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        if (!hex) {
            return false;
        }
    }
    return true;
}

} // namespace nicer::net
