#pragma once

#include "net/FetchReport.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nicer::daemon {

/// One work unit as nicerd shows it: the Downloads property, `nicer status` and the tray.
struct DownloadEntry {
    std::string name;             ///< as in the manifest
    std::uint64_t bytesDone = 0;  ///< in place now (in the part file, or all of it once done)
    std::uint64_t bytesTotal = 0; ///< the expected size; 0 while it is not known
    double rate = 0.0;            ///< bytes per second over the last seconds while downloading, else 0
    std::string state;            ///< downloadStateText()

    bool operator==(const DownloadEntry&) const = default;
};

/**
 * Where a file stands, for people and clients. The text starts with one keyword:
 * "checking" (hashing what an earlier run left), "queued" (waiting for a free stream), "waiting" (to retry
 * after a failed attempt: "waiting: REASON"), "downloading", "ok" (downloaded and verified; "ok, unverified"
 * when there was no hash to check), "present" (was already in place and verified), "failed: REASON" (every
 * mirror failed; with @p retryIn, "; nicerd tries again in N min" follows), or "stopped" (nicerd stopped
 * first; the part file stays).
 */
std::string downloadStateText(const net::FetchFileReport& file,
                              std::optional<std::chrono::seconds> retryIn = std::nullopt);

/// True for the states that change by themselves soon: checking, queued, waiting and downloading.
bool isDownloadActive(std::string_view state);

/// The BandwidthMode property: "none" without downloads, else "nice", "nice, capped N B/s", "capped N B/s"
/// or "full" (no limit at all); N is a whole number of bytes per second.
std::string bandwidthModeText(bool hasDownloads, bool nice, std::optional<double> maxRate);

} // namespace nicer::daemon
