#include "daemon/ManifestSources.h"

#include "net/fetch/SafePath.h"
#include "net/fetch/Url.h"

#include <map>
#include <string_view>

namespace nicer::daemon {

namespace {

bool isUrl(std::string_view text) {
    return text.starts_with("http://") || text.starts_with("https://");
}

Result<net::MetalinkFile> singleFile(const std::string& source) {
    auto url = net::parseUrl(source);
    if (!url) {
        return Error{"manifest " + source + ": " + url.error().message};
    }
    std::string_view path = url->path;
    path = path.substr(0, path.find('?'));
    const std::string name(path.substr(path.rfind('/') + 1));
    if (name.empty()) {
        return Error{"manifest " + source +
                     ": the URL names no file (its path ends with '/'); give the URL of the file itself"};
    }
    if (name.ends_with(".meta4") || name.ends_with(".metalink")) {
        // Downloading the manifest as a work unit would be a silent surprise; fetching it at every start
        // would make the daemon's start depend on the network.
        return Error{"manifest " + source +
                     ": nicerd reads Metalink manifests from files, not URLs; download it first (e.g. `nicer "
                     "fetch " +
                     source + " --dir DIR`, or curl) and give its path"};
    }
    net::MetalinkFile file;
    file.name = name;
    file.mirrors.push_back(net::Mirror{url->toString(), 1});
    return file;
}

} // namespace

Result<std::vector<net::MetalinkFile>> readDownloadSources(const std::vector<std::string>& sources) {
    std::vector<net::MetalinkFile> files;
    std::map<std::string, std::string> listedBy; // file name -> the source that lists it
    for (const auto& source : sources) {
        std::vector<net::MetalinkFile> found;
        if (isUrl(source)) {
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
