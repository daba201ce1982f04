#pragma once

#include "net/fetch/FetcherOptions.h"
#include "net/fetch/Metalink.h"
#include "net/fetch/Url.h"
#include "util/Result.h"

#include <filesystem>
#include <vector>

namespace nicer::net {

/// One file of a checked plan: what the manifest says, where it goes, and its mirrors' parsed URLs.
struct PlannedFile {
    MetalinkFile file;
    std::filesystem::path target;
    std::vector<Url> mirrors;
};

/// A fetch that may start: every file has a safe, unique target below dir and at least one http(s) URL.
struct FetchPlan {
    std::filesystem::path dir; ///< absolute
    std::vector<PlannedFile> files;
    bool anyTls = false; ///< some mirror is https
};

/// Checks a manifest and options before anything is written: files to fetch, streams and attempts at
/// least 1, a positive maximum rate, a directory; every name a safe relative path (safeTargetPath) and
/// unique; every SHA-256 64 hex digits; every mirror URL parseable, and at least one per file. Pure apart
/// from making @p dir absolute.
Result<FetchPlan> planFetch(std::vector<MetalinkFile> files, const std::filesystem::path& dir,
                            const FetcherOptions& options);

} // namespace nicer::net
