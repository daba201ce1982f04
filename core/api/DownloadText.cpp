#include "api/DownloadText.h"

#include <algorithm>
#include <cstdint>

namespace nicer::api {

namespace {

std::string roughly(std::int64_t seconds) {
    if (seconds < 60) {
        return std::to_string(std::max<std::int64_t>(seconds, 0)) + " s";
    }
    // Rounded up: "in 1 min" for 59 s left would promise too early.
    return std::to_string((seconds + 59) / 60) + " min";
}

} // namespace

std::string downloadStateText(const DownloadEntry& e) {
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
        return std::string(busKeyword(e.state));
    }
}

std::string bandwidthModeText(const BandwidthMode& mode) {
    using Kind = BandwidthMode::Kind;
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

} // namespace nicer::api
