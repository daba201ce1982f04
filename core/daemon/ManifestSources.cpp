#include "daemon/ManifestSources.h"

#include "net/fetch/DownloadSource.h"
#include "net/fetch/SafePath.h"
#include "net/fetch/Url.h"

#include <map>

namespace nicer::daemon {

namespace {

Result<net::MetalinkFile> singleFile(const std::string& source) {
    auto url = net::parseUrl(source);
    if (!url) {
        return Error{"manifest " + source + ": " + url.error().message};
    }
    if (net::namesManifest(*url)) {
        // Downloading the manifest as a work unit would be a silent surprise; fetching it at every start
        // would make the daemon's start depend on the network.
        return Error{"manifest " + source +
                     ": nicerd reads Metalink manifests from files, not URLs; download it first (e.g. `nicer "
                     "fetch " +
                     source + " --dir DIR`, or curl) and give its path"};
    }
    auto file = net::singleFileOf(*url);
    if (!file) {
        return Error{"manifest " + source + ": " + file.error().message};
    }
    return file;
}

} // namespace

Result<std::vector<net::MetalinkFile>> readDownloadSources(const std::vector<std::string>& sources) {
    std::vector<net::MetalinkFile> files;
    std::map<std::string, std::string> listedBy; // file name -> the source that lists it
    for (const auto& source : sources) {
        std::vector<net::MetalinkFile> found;
        if (net::isHttpUrl(source)) {
            auto file = singleFile(source);
            if (!file) {
                return file.error();
            }
            found.push_back(std::move(*file));
        } else {
            auto manifest = net::readMetalink(source);
            if (!manifest) {
                return manifest.error(); // it names the file already
            }
            found = std::move(*manifest);
        }
        for (auto& file : found) {
            // Only the name's form is checked here (lexically): the directory comes later.
            if (auto safe = net::safeTargetPath("/downloads", file.name); !safe) {
                return Error{"manifest " + source + ": " + safe.error().message};
            }
            if (auto [at, inserted] = listedBy.emplace(file.name, source); !inserted) {
                return Error{"manifest " + source + ": the file name '" + file.name + "' is also listed by " +
                             (at->second == source ? "this manifest" : at->second) +
                             "; every file needs its own name in the download directory"};
            }
            files.push_back(std::move(file));
        }
    }
    return files;
}

} // namespace nicer::daemon
