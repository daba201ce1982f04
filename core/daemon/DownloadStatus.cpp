#include "daemon/DownloadStatus.h"

#include <cmath>

namespace nicer::daemon {

namespace {

std::string roughly(std::chrono::seconds wait) {
    if (wait < std::chrono::minutes(1)) {
        return std::to_string(std::max<long long>(wait.count(), 0)) + " s";
    }
    // Rounded up: "in 1 min" for 59 s left would promise too early.
    return std::to_string((wait.count() + 59) / 60) + " min";
}

} // namespace

std::string downloadStateText(const net::FetchFileReport& file, std::optional<std::chrono::seconds> retryIn) {
    using net::FileState;
    switch (file.state) {
    case FileState::Checking:
        return "checking";
    case FileState::Queued:
        return "queued";
    case FileState::Waiting:
        return file.error.empty() ? "waiting" : "waiting: " + file.error;
    case FileState::Active:
        return "downloading";
    case FileState::Ok:
        return file.verified ? "ok" : "ok, unverified";
    case FileState::AlreadyPresent:
        return "present";
    case FileState::Failed: {
        std::string text = "failed: " + (file.error.empty() ? std::string("no reason given") : file.error);
        if (retryIn) {
            text += "; nicerd tries again in " + roughly(*retryIn);
        }
        return text;
    }
    case FileState::Cancelled:
        return "stopped";
    }
    return std::string(net::toString(file.state));
}

std::string bandwidthModeText(bool hasDownloads, bool nice, std::optional<double> maxRate) {
    if (!hasDownloads) {
        return "none";
    }
    const std::string cap =
        maxRate ? "capped " + std::to_string(static_cast<long long>(std::llround(*maxRate))) + " B/s" : "";
    if (nice) {
        return cap.empty() ? "nice" : "nice, " + cap;
    }
    return cap.empty() ? "full" : cap;
}

} // namespace nicer::daemon
