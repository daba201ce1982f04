#pragma once

#include "util/Result.h"
#include "util/UniqueFd.h"

#include <filesystem>

namespace nicer::net {

/// Creates @p dir if missing and takes its lock (flock on the directory), held while the returned descriptor
/// is open: two fetches writing the same part files would corrupt each other's prefixes. Fails when another
/// fetch holds it, or the directory cannot be made or opened.
Result<UniqueFd> lockDownloadDirectory(const std::filesystem::path& dir);

} // namespace nicer::net
