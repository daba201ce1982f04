#pragma once

#include "api/DownloadEntry.h"
#include "net/fetch/FetchReport.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nicer::daemon {

/// The state fields of a file's entry (state, verified, reason, retryInSeconds) from the fetcher's report;
/// @p retryIn is when nicerd tries the failed files again, kept only for a failed file.
api::DownloadEntry downloadEntry(const net::FetchFileReport& file,
                                 std::optional<std::chrono::seconds> retryIn = std::nullopt);

/**
 * Where a file stands, for people (`nicer status`, nicerd's log). The text starts with one keyword:
 * "checking", "queued", "waiting" ("waiting: REASON"), "downloading", "ok" ("ok, unverified" when there was
 * no hash to check), "present", "failed: REASON" (with a retry time, "; nicerd tries again in N min"
 * follows), or "stopped".
 */
std::string downloadStateText(const api::DownloadEntry& entry);

/// The bandwidth mode for nicerd's settings: None without downloads, else Nice (with the cap, if any),
/// Capped, or Full (no limit at all).
api::BandwidthMode bandwidthMode(bool hasDownloads, bool nice, std::optional<double> maxRate);

/// The mode for people: "none", "nice", "nice, capped N B/s", "capped N B/s" or "full"; N is a whole number
/// of bytes per second.
std::string bandwidthModeText(const api::BandwidthMode& mode);

} // namespace nicer::daemon
