#pragma once

#include "util/Result.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace nicer::net {

/// The order in which pending downloads get a free stream.
enum class DownloadOrder {
    Srpt, ///< shortest remaining first: the lowest mean completion time (unknown sizes go last)
    Fifo, ///< manifest order
};

/// "srpt" or "fifo" (any case); the error lists the choices.
Result<DownloadOrder> parseDownloadOrder(std::string_view text);

/// "srpt" or "fifo", as parseDownloadOrder reads it.
std::string_view toString(DownloadOrder order);

/// A download waiting for a stream.
struct PendingDownload {
    std::size_t index = 0;                  ///< position in the manifest
    std::optional<std::uint64_t> remaining; ///< bytes still to fetch; nullopt when the size is unknown
};

/// The manifest indices of the downloads to start now, at most @p slots of them, in the order to open their
/// streams. Ties (and Fifo) go by manifest index.
std::vector<std::size_t> pickNext(std::span<const PendingDownload> pending, std::size_t slots,
                                  DownloadOrder order);

} // namespace nicer::net
