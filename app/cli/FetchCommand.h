#pragma once

#include "net/fetch/FetcherOptions.h"

#include <cstddef>
#include <string>

namespace nicer::cli {

struct FetchOptions {
    std::string source; ///< a Metalink file, or an http(s) URL (of a file, or of a .meta4/.metalink)
    std::string dir;
    std::size_t streams = net::kDefaultStreams;
    std::string maxRate; ///< as typed: "10M", "500k", "250000"
    bool nice = false;
    std::string caFile;
    std::string order = "srpt";
    bool json = false;
    int attempts = 5;
    double retryWait = 1.0;
    double stallTimeout = 30.0;
    std::string minRate = "1k"; ///< as typed; "0" for no minimum
};

/// `nicer fetch MANIFEST_OR_URL --dir DIR [...]`: downloads work units over HTTP/2, verified and resumable.
int runFetch(const FetchOptions& options);

} // namespace nicer::cli
