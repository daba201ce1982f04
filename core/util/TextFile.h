#pragma once

#include "util/Result.h"

#include <filesystem>
#include <string>
#include <sys/types.h>

namespace nicer {

/// The whole content of the file at @p path (read with plain read(2), so /proc and cgroup files work); the
/// error names the file and says whether it could not be opened or not be read.
Result<std::string> readTextFile(const std::filesystem::path& path);

/// Replaces the file at @p path by @p text atomically (a temporary file beside it, written, flushed to disk
/// and renamed over it), creating its directory; a crash leaves the old file or the new one, never half of
/// one. The file gets @p mode (less the umask).
Result<void> writeFileAtomically(const std::filesystem::path& path, const std::string& text,
                                 mode_t mode = 0644);

} // namespace nicer
