#include "net/Sha256.h"

#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <fcntl.h>
#include <new>
#include <system_error>
#include <unistd.h>

namespace nicer::net {

namespace {

std::string toHex(const unsigned char* digest, unsigned int size) {
    static constexpr char kHexDigits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(2 * std::size_t{size});
    for (unsigned int i = 0; i < size; ++i) {
        hex += kHexDigits[digest[i] >> 4];
        hex += kHexDigits[digest[i] & 0x0f];
    }
    return hex;
}

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
    return toHex(digest.data(), size);
}

/// Closes the descriptor it owns.
class FileDescriptor {
public:
    explicit FileDescriptor(int fd)
        : m_fd(fd) {}
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    ~FileDescriptor() {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    int get() const { return m_fd; }

private:
    int m_fd;
};

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

Result<std::string> sha256OfFile(const std::filesystem::path& path) {
    const auto failure = [&](const char* what) {
        return Error{std::string(what) + " " + path.string() +
                     " to check its SHA-256: " + std::generic_category().message(errno)};
    };
    const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (file.get() < 0) {
        return failure("cannot open");
    }
    Sha256 sha;
    std::array<std::byte, 1 << 16> buffer{};
    for (;;) {
        const auto n = ::read(file.get(), buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return failure("cannot read");
        }
        if (n == 0) {
            return sha.hexDigest();
        }
        sha.update(buffer.data(), static_cast<std::size_t>(n));
    }
}

} // namespace nicer::net
