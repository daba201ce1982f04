#pragma once

#include "net/fetch/Metalink.h"
#include "net/fetch/Url.h"
#include "util/Result.h"

#include <string>
#include <string_view>

/// What `nicer fetch` and nicerd's --manifest take as a download source: the path of a Metalink 4 file, the
/// http(s) URL of one, or the URL of a single file. The rules both follow, once.
namespace nicer::net {

/// Whether @p source is a URL (http:// or https://) rather than the path of a manifest file.
bool isHttpUrl(std::string_view source);

/// Whether @p url names a Metalink manifest (its path, query left out, ends with .meta4 or .metalink) rather
/// than a file to download.
bool namesManifest(const Url& url);

/// The single file @p url names, to download from there: named after the last component of its path (query
/// left out), no hash (nothing to verify it against), no size. An error when the path ends with '/', saying
/// to give the URL of the file itself.
Result<MetalinkFile> singleFileOf(const Url& url);

} // namespace nicer::net
