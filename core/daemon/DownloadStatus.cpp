#include "daemon/DownloadStatus.h"

#include <algorithm>
#include <cmath>

namespace nicer::daemon {

namespace {

std::string roughly(std::int64_t seconds) {
    if (seconds < 60) {
        return std::to_string(std::max<std::int64_t>(seconds, 0)) + " s";
    }
    // Rounded up: "in 1 min" for 59 s left would promise too early.
    return std::to_string((seconds + 59) / 60) + " min";
}

} // namespace

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

std::string downloadStateText(const api::DownloadEntry& e) {
    using api::DownloadState;
    switch (e.state) {
    case DownloadState::Waiting:
        return e.reason.empty() ? "waiting" : "waiting: " + e.reason;
    case DownloadState::Ok:
        return e.verified ? "ok" : "ok, unverified";
    case DownloadState::Failed: {
        std::string text = "failed: " + (e.reason.empty() ? std::string("no reason given") : e.reason);
        if (e.retryInSeconds) {
            text += "; nicerd tries again in " + roughly(*e.retryInSeconds);
        }
        return text;
    }
    default:
        return std::string(api::downloadStateKeyword(e.state));
    }
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

std::string bandwidthModeText(const api::BandwidthMode& mode) {
    using Kind = api::BandwidthMode::Kind;
    const std::string cap =
        mode.capBytesPerSecond ? "capped " + std::to_string(*mode.capBytesPerSecond) + " B/s" : "";
    switch (mode.kind) {
    case Kind::None:
        return "none";
    case Kind::Nice:
        return cap.empty() ? "nice" : "nice, " + cap;
    case Kind::Capped:
        return cap.empty() ? "capped" : cap;
    case Kind::Full:
        return "full";
    }
    return "none";
}

} // namespace nicer::daemon
