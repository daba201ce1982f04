#pragma once

#include "api/DownloadEntry.h"

#include <string>

namespace nicer::api {

/**
 * Where a file stands, for people (`nicer status`, nicerd's log). The text starts with one keyword:
 * "checking", "queued", "waiting" ("waiting: REASON"), "downloading", "ok" ("ok, unverified" when there was
 * no hash to check), "present", "failed: REASON" (with a retry time, "; nicerd tries again in N min"
 * follows), or "stopped".
 */
std::string downloadStateText(const DownloadEntry& entry);

/// The mode for people: "none", "nice", "nice, capped N B/s", "capped N B/s" or "full"; N is a whole number
/// of bytes per second.
std::string bandwidthModeText(const BandwidthMode& mode);

} // namespace nicer::api
