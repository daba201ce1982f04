#pragma once

#include "net/fetch/FetcherOptions.h"
#include "net/fetch/Metalink.h"

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <vector>

namespace nicer::daemon {

/// What nicerd downloads for the workload, and how (nicerd's manifest, download-dir, max-rate, nice, streams,
/// ca-file and download-retry options).
struct DownloadSettings {
    /// The files of every manifest, in order; empty: nicerd downloads nothing.
    std::vector<net::MetalinkFile> files;
    /// Where they go; empty: the directory of the workload nicerd starts with (defaultDownloadDir).
    std::filesystem::path dir;
    /// Yield the link to the user's own traffic (the nice mode); on by default for the daemon.
    bool nice = true;
    /// Hard cap on the receive rate, bytes per second; nullopt for none.
    std::optional<double> maxRate;
    /// Concurrent HTTP/2 streams at most.
    std::size_t streams = net::kDefaultStreams;
    /// Extra CA certificates (PEM) for https mirrors a private CA signed.
    std::optional<std::filesystem::path> caFile;
    /// How long after a round with failed files those files are tried again.
    std::chrono::seconds retryDelay{600};
};

} // namespace nicer::daemon
