#include "net/fetch/DownloadOrder.h"

#include "util/Text.h"

#include <algorithm>
#include <string>
#include <tuple>

namespace nicer::net {

Result<DownloadOrder> parseDownloadOrder(std::string_view text) {
    const std::string lower = text::toLowerAscii(text);
    for (const auto order : {DownloadOrder::Srpt, DownloadOrder::Fifo}) {
        if (lower == toString(order)) {
            return order;
        }
    }
    return Error{"unknown download order '" + std::string(text) +
                 "': choose 'srpt' (smallest remaining first) or 'fifo' (manifest order)"};
}

std::string_view toString(DownloadOrder order) {
    switch (order) {
    case DownloadOrder::Srpt:
        return "srpt";
    case DownloadOrder::Fifo:
        return "fifo";
    }
    return "srpt";
}

std::vector<std::size_t> pickNext(std::span<const PendingDownload> pending, std::size_t slots,
                                  DownloadOrder order) {
    std::vector<PendingDownload> sorted(pending.begin(), pending.end());
    const auto byIndex = [](const PendingDownload& a, const PendingDownload& b) { return a.index < b.index; };
    // Known sizes before unknown ones, then fewest bytes left, then manifest order.
    const auto bySize = [](const PendingDownload& a, const PendingDownload& b) {
        return std::make_tuple(!a.remaining, a.remaining.value_or(0), a.index) <
               std::make_tuple(!b.remaining, b.remaining.value_or(0), b.index);
    };
    const auto count = std::min(slots, sorted.size());
    const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(count);
    if (order == DownloadOrder::Srpt) {
        std::partial_sort(sorted.begin(), middle, sorted.end(), bySize);
    } else {
        std::partial_sort(sorted.begin(), middle, sorted.end(), byIndex);
    }
    std::vector<std::size_t> picked;
    picked.reserve(count);
    for (auto it = sorted.begin(); it != middle; ++it) {
        picked.push_back(it->index);
    }
    return picked;
}

} // namespace nicer::net
