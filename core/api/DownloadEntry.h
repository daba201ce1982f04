#pragma once

#include "api/BusStruct.h"
#include "api/Keywords.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

namespace nicer::api {

/// Where a work unit stands. On D-Bus it travels as its keyword (busKeyword).
enum class DownloadState {
    Checking,    ///< hashing what an earlier run left
    Queued,      ///< waiting for a free stream
    Waiting,     ///< to retry after a failed attempt (reason says why)
    Downloading, ///< receiving now
    Ok,          ///< downloaded (verified says whether a hash was checked)
    Present,     ///< was already in place and verified
    Failed,      ///< every mirror failed (reason says why; retryInSeconds when nicerd tries again)
    Stopped,     ///< nicerd stopped first; the part file stays
};

inline constexpr std::array<std::string_view, 8> kDownloadStateKeywords = {
    "checking", "queued", "waiting", "downloading", "ok", "present", "failed", "stopped"};

/// On the bus, a keyword a client does not know (a newer nicerd's) shows as queued: it changes soon.
template <>
struct BusKeywords<DownloadState> {
    static constexpr const auto& keywords = kDownloadStateKeywords;
    static constexpr DownloadState unknown = DownloadState::Queued;
};

/// One work unit as nicerd shows it: the Downloads property, `nicer status` and the tray.
struct DownloadEntry {
    std::string name;             ///< as in the manifest
    std::uint64_t bytesDone = 0;  ///< in place now (in the part file, or all of it once done)
    std::uint64_t bytesTotal = 0; ///< the expected size; 0 while it is not known
    double rate = 0.0;            ///< bytes per second over the last seconds while downloading, else 0
    DownloadState state = DownloadState::Queued;
    bool verified = false; ///< Ok or Present: checked against the manifest's hash
    std::string reason;    ///< Waiting or Failed: why, in plain words; else empty
    /// Failed: seconds until nicerd tries the failed files again, when it will (on the bus -1: it will not).
    std::optional<std::int64_t> retryInSeconds;

    bool operator==(const DownloadEntry&) const = default;

    /// One entry of the Downloads property.
    static constexpr auto kBusFields = std::tuple{
        busField("name", &DownloadEntry::name),
        busField("bytes_done", &DownloadEntry::bytesDone),
        busField("bytes_total", &DownloadEntry::bytesTotal),
        busField("rate", &DownloadEntry::rate),
        busField("state", &DownloadEntry::state),
        busField("verified", &DownloadEntry::verified),
        busField("reason", &DownloadEntry::reason),
        busField("retry_in_s", &DownloadEntry::retryInSeconds),
    };
};

/// True for the states that change by themselves soon: checking, queued, waiting and downloading.
constexpr bool isDownloadActive(DownloadState state) {
    return state == DownloadState::Checking || state == DownloadState::Queued ||
           state == DownloadState::Waiting || state == DownloadState::Downloading;
}

/// True once the file is complete here: ok or present.
constexpr bool isDownloadInPlace(DownloadState state) {
    return state == DownloadState::Ok || state == DownloadState::Present;
}

/// How nicerd's downloads use the link (the BandwidthMode and BandwidthCap properties).
struct BandwidthMode {
    enum class Kind {
        None,   ///< nicerd downloads nothing
        Nice,   ///< yields the link to the user's own traffic (and may be capped as well)
        Capped, ///< at most the cap, without yielding
        Full,   ///< no limit at all
    };
    Kind kind = Kind::None;
    /// The cap in bytes per second, when there is one (Nice or Capped).
    std::optional<std::uint64_t> capBytesPerSecond;

    bool operator==(const BandwidthMode&) const = default;
};

inline constexpr std::array<std::string_view, 4> kBandwidthKindKeywords = {"none", "nice", "capped", "full"};

constexpr std::string_view bandwidthKindKeyword(BandwidthMode::Kind kind) {
    return keywordIn(kBandwidthKindKeywords, kind);
}

constexpr std::optional<BandwidthMode::Kind> bandwidthKindFromKeyword(std::string_view keyword) {
    return valueIn<BandwidthMode::Kind>(kBandwidthKindKeywords, keyword);
}

} // namespace nicer::api
