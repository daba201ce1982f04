#pragma once

#include "net/fetch/Sha256.h"
#include "util/Result.h"
#include "util/UniqueFd.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nicer::net {

/// One downloaded file on disk: NAME.part while it downloads, renamed to NAME once verified.
///
/// Every path below the download directory is reached through directory descriptors opened without
/// following symbolic links (O_NOFOLLOW at each step), so a link planted in the directory cannot make a
/// download land outside it. The part file only ever holds a prefix of the file, written in order, so its
/// size is always a valid resume point, even after kill -9.
class PartFile {
public:
    /// Opens the directory that will hold @p name (a name safeTargetPath() accepted) below @p dir, creating
    /// the intermediate directories. Fails when one of them is a symbolic link or not a directory.
    static Result<PartFile> open(const std::filesystem::path& dir, std::string_view name);

    PartFile(PartFile&&) noexcept = default;
    PartFile& operator=(PartFile&&) noexcept = default;
    ~PartFile() = default;

    /// The size of the finished file NAME when it exists; nullopt when it does not. Fails when NAME is not
    /// a regular file (e.g. a symbolic link or a directory), which nicer will not replace.
    Result<std::optional<std::uint64_t>> finalSize() const;
    /// Opens the finished file NAME for reading, to hash it piece by piece with hashFinal().
    Result<UniqueFd> openFinal() const;
    /// Feeds @p length bytes of @p final (from openFinal()) from offset @p from on to @p hash.
    Result<void> hashFinal(const UniqueFd& final, Sha256& hash, std::uint64_t from,
                           std::uint64_t length) const;

    /// The size of NAME.part when it exists, without opening it for writing; nullopt when there is none.
    Result<std::optional<std::uint64_t>> existingPartSize() const;
    /// Opens NAME.part for writing, creating it empty if needed; returns its size.
    Result<std::uint64_t> openPart();
    /// Feeds @p length bytes of the open part file from offset @p from on to @p hash.
    Result<void> hashPart(Sha256& hash, std::uint64_t from, std::uint64_t length) const;
    /// Appends @p data at the end of the open part file.
    Result<void> append(std::span<const std::uint8_t> data);
    /// Empties the open part file.
    Result<void> truncate();
    /// Makes the verified part file the finished file: flushes it to disk, renames NAME.part to NAME
    /// (replacing an old NAME atomically) and flushes the directory. The part file is closed afterwards.
    Result<void> commit();
    /// Closes and deletes NAME.part (nothing happens if there is none).
    Result<void> discard();
    /// Closes the part file, keeping it for a later resume.
    void close();

    /// Bytes in the open part file.
    std::uint64_t size() const { return m_size; }
    bool isOpen() const { return m_file.valid(); }
    /// NAME's full path, for messages.
    const std::filesystem::path& path() const { return m_path; }

private:
    PartFile(UniqueFd directory, std::filesystem::path path, std::string base);
    Error ioError(std::string_view what, int error) const;
    std::string partName() const;

    UniqueFd m_directory;
    std::filesystem::path m_path;
    std::string m_base;
    UniqueFd m_file;
    std::uint64_t m_size = 0;
};

} // namespace nicer::net
