#include "daemon/DownloadStatus.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace nicer::daemon {

api::DownloadEntry downloadEntry(const net::FetchFileReport& file,
                                 std::optional<std::chrono::seconds> retryIn) {
    using api::DownloadState;
    using net::FileState;
    api::DownloadEntry e;
    switch (file.state) {
    case FileState::Checking:
        e.state = DownloadState::Checking;
        break;
    case FileState::Queued:
        e.state = DownloadState::Queued;
        break;
    case FileState::Waiting:
        e.state = DownloadState::Waiting;
        e.reason = file.error;
        break;
    case FileState::Active:
        e.state = DownloadState::Downloading;
        break;
    case FileState::Ok:
        e.state = DownloadState::Ok;
        e.verified = file.verified;
        break;
    case FileState::AlreadyPresent:
        e.state = DownloadState::Present;
        e.verified = true;
        break;
    case FileState::Failed:
        e.state = DownloadState::Failed;
        e.reason = file.error.empty() ? std::string("no reason given") : file.error;
        if (retryIn) {
            e.retryInSeconds = retryIn->count();
        }
        break;
    case FileState::Cancelled:
        e.state = DownloadState::Stopped;
        break;
    }
    return e;
}

api::BandwidthMode bandwidthMode(bool hasDownloads, bool nice, std::optional<double> maxRate) {
    using Kind = api::BandwidthMode::Kind;
    if (!hasDownloads) {
        return {};
    }
    api::BandwidthMode mode;
    if (maxRate) {
        mode.capBytesPerSecond = static_cast<std::uint64_t>(std::llround(std::max(0.0, *maxRate)));
    }
    mode.kind = nice ? Kind::Nice : maxRate ? Kind::Capped : Kind::Full;
    return mode;
}

} // namespace nicer::daemon
