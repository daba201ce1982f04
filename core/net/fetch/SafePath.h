#pragma once

#include "util/Result.h"

#include <filesystem>
#include <string_view>

namespace nicer::net {

/// Appended to a file's name while it is being downloaded; manifest names may not end with it.
inline constexpr std::string_view kPartialSuffix = ".part";

/// The path in @p dir where the file a manifest calls @p name is written. Names may contain subdirectories
/// ("a/b.dat") but can never reach outside @p dir: empty, absolute, "." and ".." components, empty
/// components, backslashes, control characters, components longer than the file system allows and the
/// reserved suffix
/// ".part" are all rejected. Names are taken literally: "%2e%2e" is a file called "%2e%2e", not "..".
/// The check is lexical; the writer must still not follow symbolic links it did not create.
Result<std::filesystem::path> safeTargetPath(const std::filesystem::path& dir, std::string_view name);

/// Where the download of @p target is kept until its hash is verified: @p target with kPartialSuffix.
std::filesystem::path partialPath(const std::filesystem::path& target);

} // namespace nicer::net
