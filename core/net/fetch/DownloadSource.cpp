#include "net/fetch/DownloadSource.h"

namespace nicer::net {

namespace {

/// The path of @p url without its query.
std::string_view pathOf(const Url& url) {
    const std::string_view path = url.path;
    return path.substr(0, path.find('?'));
}

} // namespace

bool isHttpUrl(std::string_view source) {
    return source.starts_with("http://") || source.starts_with("https://");
}

bool namesManifest(const Url& url) {
    const auto path = pathOf(url);
    return path.ends_with(".meta4") || path.ends_with(".metalink");
}

Result<MetalinkFile> singleFileOf(const Url& url) {
    const auto path = pathOf(url);
    MetalinkFile file;
    file.name = path.substr(path.rfind('/') + 1);
    if (file.name.empty()) {
        return Error{"the URL " + url.toString() +
                     " names no file (its path ends with '/'); give the URL of the file itself"};
    }
    file.mirrors.push_back(Mirror{url.toString(), 1});
    return file;
}

} // namespace nicer::net
