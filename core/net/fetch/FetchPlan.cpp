#include "net/fetch/FetchPlan.h"

#include "net/fetch/SafePath.h"
#include "net/fetch/Sha256.h"

#include <set>

namespace nicer::net {

Result<FetchPlan> planFetch(std::vector<MetalinkFile> files, const std::filesystem::path& dir,
                            const FetcherOptions& options) {
    if (files.empty()) {
        return Error{"nothing to download: the manifest lists no files"};
    }
    if (options.streams == 0) {
        return Error{"the number of streams must be at least 1"};
    }
    if (options.attemptsPerMirror < 1) {
        return Error{"the number of attempts per mirror must be at least 1"};
    }
    if (options.maxRate && !(*options.maxRate > 0.0)) {
        return Error{"the maximum rate must be above 0 bytes per second"};
    }
    if (dir.empty()) {
        return Error{"no download directory given"};
    }
    FetchPlan plan;
    std::error_code ec;
    plan.dir = std::filesystem::absolute(dir, ec);
    if (ec) {
        return Error{"cannot use the download directory " + dir.string() + ": " + ec.message()};
    }

    // The whole plan is checked before anything is written: one unsafe name refuses the manifest.
    std::set<std::filesystem::path> targets;
    plan.files.reserve(files.size());
    for (auto& file : files) {
        auto target = safeTargetPath(plan.dir, file.name);
        if (!target) {
            return target.error();
        }
        if (!targets.insert(*target).second) {
            return Error{"file name '" + file.name +
                         "' appears twice in the manifest; every file needs its own name"};
        }
        if (!file.sha256.empty() && !isSha256Hex(file.sha256)) {
            return Error{"file '" + file.name +
                         "' has a SHA-256 that is not 64 hex digits; fix the manifest"};
        }
        std::vector<Url> urls;
        for (const auto& mirror : file.mirrors) {
            auto url = parseUrl(mirror.url);
            if (!url) {
                return Error{"file '" + file.name + "': " + url.error().message};
            }
            plan.anyTls = plan.anyTls || url->scheme == "https";
            urls.push_back(std::move(*url));
        }
        if (urls.empty()) {
            return Error{"file '" + file.name + "' has no http:// or https:// URL to download it from"};
        }
        plan.files.push_back(PlannedFile{std::move(file), std::move(*target), std::move(urls)});
    }
    return plan;
}

} // namespace nicer::net
