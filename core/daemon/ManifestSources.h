#pragma once

#include "net/fetch/Metalink.h"
#include "util/Result.h"

#include <string>
#include <vector>

namespace nicer::daemon {

/**
 * What nicerd is to download, from its manifest options in order. Each source is either the path of a
 * Metalink 4 file (its files, each verified by SHA-256) or the http:// or https:// URL of a single file,
 * which is downloaded under the last component of its path and unverified (there is no hash to check).
 * Every error names the source: a manifest that cannot be read or parsed, a URL that names no file or names
 * a Metalink (nicerd reads manifests from files: download it first), a file name that is not a safe
 * relative path, or one that two sources both list.
 */
Result<std::vector<net::MetalinkFile>> readDownloadSources(const std::vector<std::string>& sources);

} // namespace nicer::daemon
