#pragma once

#include "net/fetch/FetchReport.h"

#include <cstddef>

namespace nicer::net {

/// Watches a Fetcher: the CLI draws its progress from it, and nicerd or the tray can show downloads. The
/// calls come from the fetcher's sd-event loop; an observer must not destroy the Fetcher from them, except
/// from onFinished().
class FetchObserver {
public:
    virtual ~FetchObserver() = default;
    /// About every 100 ms while files are downloading.
    virtual void onProgress(const FetchReport& report) { (void)report; }
    /// File @p index reached a final state (ok, already present, failed).
    virtual void onFileDone(const FetchReport& report, std::size_t index) {
        (void)report;
        (void)index;
    }
    /// Every file is in a final state, or the fetch was cancelled. The last call.
    virtual void onFinished(const FetchReport& report) { (void)report; }
};

} // namespace nicer::net
