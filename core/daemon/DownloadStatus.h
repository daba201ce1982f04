#pragma once

#include "api/DownloadEntry.h"
#include "net/fetch/FetchReport.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nicer::daemon {

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

/// The BandwidthMode property: "none" without downloads, else "nice", "nice, capped N B/s", "capped N B/s"
/// or "full" (no limit at all); N is a whole number of bytes per second.
std::string bandwidthModeText(bool hasDownloads, bool nice, std::optional<double> maxRate);

} // namespace nicer::daemon
