#pragma once

#include "util/Result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::net {

/// One place a file can be fetched from.
struct Mirror {
    std::string url;            ///< http:// or https://, as written in the manifest
    int priority = kNoPriority; ///< 1..999999, lower is preferred

    static constexpr int kNoPriority = 999999; ///< what a <url> without a priority gets: least preferred

    bool operator==(const Mirror&) const = default;
};

/// A file a Metalink manifest describes.
struct MetalinkFile {
    std::string name;                  ///< relative path as written; check it with safeTargetPath
    std::optional<std::uint64_t> size; ///< bytes, when the manifest gives it
    std::string sha256;                ///< 64 lower-case hex digits
    std::vector<Mirror> mirrors;       ///< http(s) only, by priority, manifest order among equals

    bool operator==(const MetalinkFile&) const = default;
};

/// Parses a Metalink 4 document (RFC 5854). Every file needs a name, a sha-256 hash and at least one
/// http:// or https:// URL; URLs of other schemes (ftp, magnet, ...) and other hash types are skipped.
/// The error says what is wrong, where, and how to fix it.
Result<std::vector<MetalinkFile>> parseMetalink(std::string_view xml);

/// Reads and parses the Metalink 4 file at @p path; errors start with the path.
Result<std::vector<MetalinkFile>> readMetalink(const std::filesystem::path& path);

} // namespace nicer::net
