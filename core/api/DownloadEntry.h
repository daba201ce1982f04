#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nicer::api {

/// One work unit as nicerd shows it: the Downloads property, `nicer status` and the tray.
struct DownloadEntry {
    std::string name;             ///< as in the manifest
    std::uint64_t bytesDone = 0;  ///< in place now (in the part file, or all of it once done)
    std::uint64_t bytesTotal = 0; ///< the expected size; 0 while it is not known
    double rate = 0.0;            ///< bytes per second over the last seconds while downloading, else 0
    std::string state;            ///< daemon::downloadStateText()

    bool operator==(const DownloadEntry&) const = default;
};

/// True for the states that change by themselves soon: checking, queued, waiting and downloading.
inline bool isDownloadActive(std::string_view state) {
    return state.starts_with("checking") || state.starts_with("queued") || state.starts_with("waiting") ||
           state.starts_with("downloading");
}

} // namespace nicer::api
