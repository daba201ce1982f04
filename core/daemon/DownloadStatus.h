#pragma once

#include "api/DownloadEntry.h"
#include "net/fetch/FetchReport.h"

#include <chrono>
#include <cstdint>
#include <optional>

namespace nicer::daemon {

/// The state fields of a file's entry (state, verified, reason, retryInSeconds) from the fetcher's report;
/// @p retryIn is when nicerd tries the failed files again, kept only for a failed file.
api::DownloadEntry downloadEntry(const net::FetchFileReport& file,
                                 std::optional<std::chrono::seconds> retryIn = std::nullopt);

/// The bandwidth mode for nicerd's settings: None without downloads, else Nice (with the cap, if any),
/// Capped, or Full (no limit at all).
api::BandwidthMode bandwidthMode(bool hasDownloads, bool nice, std::optional<double> maxRate);

} // namespace nicer::daemon
