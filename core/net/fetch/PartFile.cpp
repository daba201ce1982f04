#include "net/fetch/PartFile.h"

#include "net/fetch/SafePath.h"
#include "util/Text.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nicer::net {

namespace {

constexpr int kDirectoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string errnoText(int error) {
    return std::strerror(error);
}

// Feeds bytes [from, from + length) of @p fd to @p hash; the errno of a failed read, or -1 when the file
// ends early.
int hashRange(int fd, Sha256& hash, std::uint64_t from, std::uint64_t length) {
    std::array<std::uint8_t, 1 << 16> buffer{};
    const std::uint64_t end = from + length;
    std::uint64_t offset = from;
    while (offset < end) {
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), end - offset));
        const ssize_t n = ::pread(fd, buffer.data(), want, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return errno;
        }
        if (n == 0) {
            return -1;
        }
        hash.update(buffer.data(), static_cast<std::size_t>(n));
        offset += static_cast<std::uint64_t>(n);
    }
    return 0;
}

} // namespace

PartFile::PartFile(UniqueFd directory, std::filesystem::path path, std::string base)
    : m_directory(std::move(directory))
    , m_path(std::move(path))
    , m_base(std::move(base)) {}

Result<PartFile> PartFile::open(const std::filesystem::path& dir, std::string_view name) {
    // The download directory itself is the user's choice and may be a link; everything below is not.
    UniqueFd current(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!current) {
        return Error{"cannot open the download directory " + dir.string() + ": " + errnoText(errno)};
    }
    const auto components = text::split(name, '/');
    std::filesystem::path reached = dir;
    for (std::size_t i = 0; i + 1 < components.size(); ++i) {
        const std::string component(components[i]);
        reached /= component;
        if (::mkdirat(current.get(), component.c_str(), 0755) != 0 && errno != EEXIST) {
            return Error{"cannot create the directory " + reached.string() + ": " + errnoText(errno)};
        }
        UniqueFd next(::openat(current.get(), component.c_str(), kDirectoryFlags));
        if (!next) {
            const int error = errno;
            if (error == ELOOP || error == ENOTDIR) {
                return Error{reached.string() +
                             " is a symbolic link or not a directory; nicer does not follow links below the "
                             "download directory: move it away"};
            }
            return Error{"cannot open the directory " + reached.string() + ": " + errnoText(error)};
        }
        current = std::move(next);
    }
    return PartFile(std::move(current), dir / std::filesystem::path(name),
                    std::string(components.empty() ? name : components.back()));
}

std::string PartFile::partName() const {
    return m_base + std::string(kPartialSuffix);
}

Error PartFile::ioError(std::string_view what, int error) const {
    return Error{std::string(what) + " " + partialPath(m_path).string() + " failed: " + errnoText(error) +
                 (error == ENOSPC ? "; free some disk space and run the download again" : "")};
}

Result<std::optional<std::uint64_t>> PartFile::finalSize() const {
    struct stat info {};
    if (::fstatat(m_directory.get(), m_base.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) {
            return std::optional<std::uint64_t>();
        }
        return Error{"cannot look at " + m_path.string() + ": " + errnoText(errno)};
    }
    if (!S_ISREG(info.st_mode)) {
        return Error{m_path.string() +
                     " exists and is not a regular file (a link or a directory); nicer will not replace "
                     "it: move it away"};
    }
    return std::optional<std::uint64_t>(static_cast<std::uint64_t>(info.st_size));
}

Result<UniqueFd> PartFile::openFinal() const {
    UniqueFd file(::openat(m_directory.get(), m_base.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!file) {
        return Error{"cannot read " + m_path.string() + ": " + errnoText(errno)};
    }
    return file;
}

Result<void> PartFile::hashFinal(const UniqueFd& final, Sha256& hash, std::uint64_t from,
                                 std::uint64_t length) const {
    if (const int error = hashRange(final.get(), hash, from, length); error > 0) {
        return Error{"cannot read " + m_path.string() + ": " + errnoText(error)};
    } else if (error < 0) {
        return Error{m_path.string() + " is shorter than expected; was it changed while nicer was running?"};
    }
    return {};
}

Result<std::optional<std::uint64_t>> PartFile::existingPartSize() const {
    struct stat info {};
    if (::fstatat(m_directory.get(), partName().c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) {
            return std::optional<std::uint64_t>();
        }
        return ioError("looking at", errno);
    }
    if (!S_ISREG(info.st_mode)) {
        return Error{partialPath(m_path).string() +
                     " exists and is not a regular file (a link or a directory); move it away"};
    }
    return std::optional<std::uint64_t>(static_cast<std::uint64_t>(info.st_size));
}

Result<std::uint64_t> PartFile::openPart() {
    if (!m_file) {
        // O_NOFOLLOW: a link planted as NAME.part must not redirect the writes.
        m_file.reset(
            ::openat(m_directory.get(), partName().c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
        if (!m_file) {
            const int error = errno;
            if (error == ELOOP) {
                return Error{partialPath(m_path).string() +
                             " is a symbolic link; nicer does not follow it: move it away"};
            }
            return ioError("opening", error);
        }
    }
    struct stat info {};
    if (::fstat(m_file.get(), &info) != 0) {
        return ioError("looking at", errno);
    }
    if (!S_ISREG(info.st_mode)) {
        m_file.reset();
        return Error{partialPath(m_path).string() + " is not a regular file; move it away"};
    }
    m_size = static_cast<std::uint64_t>(info.st_size);
    return m_size;
}

Result<void> PartFile::hashPart(Sha256& hash, std::uint64_t from, std::uint64_t length) const {
    if (const int error = hashRange(m_file.get(), hash, from, length); error > 0) {
        return ioError("reading", error);
    } else if (error < 0) {
        return Error{partialPath(m_path).string() + " is shorter than expected; was it changed while " +
                     "nicer was running?"};
    }
    return {};
}

Result<void> PartFile::append(std::span<const std::uint8_t> data) {
    // pwrite at the known end: the file never gets a hole or a byte out of order, whatever happened before.
    std::size_t written = 0;
    while (written < data.size()) {
        const ssize_t n =
            ::pwrite(m_file.get(), data.data() + written, data.size() - written, static_cast<off_t>(m_size));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return ioError("writing", errno);
        }
        written += static_cast<std::size_t>(n);
        m_size += static_cast<std::uint64_t>(n);
    }
    return {};
}

Result<void> PartFile::truncate() {
    if (::ftruncate(m_file.get(), 0) != 0) {
        return ioError("emptying", errno);
    }
    m_size = 0;
    return {};
}

Result<void> PartFile::commit() {
    if (::fsync(m_file.get()) != 0) {
        return ioError("flushing", errno);
    }
    m_file.reset();
    if (::renameat(m_directory.get(), partName().c_str(), m_directory.get(), m_base.c_str()) != 0) {
        return Error{"renaming " + partialPath(m_path).string() + " to " + m_path.filename().string() +
                     " failed: " + errnoText(errno)};
    }
    // The rename is only durable once the directory is.
    if (::fsync(m_directory.get()) != 0) {
        return Error{"flushing the directory of " + m_path.string() + " failed: " + errnoText(errno)};
    }
    return {};
}

Result<void> PartFile::discard() {
    m_file.reset();
    m_size = 0;
    if (::unlinkat(m_directory.get(), partName().c_str(), 0) != 0 && errno != ENOENT) {
        return ioError("deleting", errno);
    }
    return {};
}

void PartFile::close() {
    m_file.reset();
}

} // namespace nicer::net
