#include "kernel/InterfaceTraffic.h"

#include "util/Text.h"
#include "util/TextFile.h"

#include <set>

namespace nicer::kernel {

namespace {

// Per interface the kernel prints 8 receive counters, then 8 transmit counters; received bytes are the
// first, sent bytes the ninth. Later fields are ignored so that a kernel adding some does not break us.
constexpr std::size_t kSentBytesField = 8;
constexpr std::size_t kMinFields = kSentBytesField + 1;

Error lineError(std::string_view source, std::size_t lineNo, const std::string& what) {
    return Error{std::string(source) + ":" + std::to_string(lineNo) + ": " + what};
}

} // namespace

Result<std::vector<InterfaceTraffic>> parseNetDev(std::string_view text, std::string_view source) {
    std::vector<InterfaceTraffic> interfaces;
    std::set<std::string, std::less<>> seen;
    bool haveHeader = false;
    std::size_t lineNo = 0;
    while (!text.empty()) {
        const auto eol = text.find('\n');
        const auto line = text.substr(0, eol);
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
        ++lineNo;

        if (text::trim(line).empty()) {
            continue;
        }
        // The two header lines ("Inter-|   Receive ...", " face |bytes ...") are the only ones with '|'.
        if (line.find('|') != std::string_view::npos) {
            haveHeader = true;
            continue;
        }
        // Split at the colon, not at spaces: old kernels print "eth0:123456" with no space once the
        // counter is wide, and interface names cannot contain ':'.
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            return lineError(source, lineNo,
                             "'" + std::string(text::trim(line)) +
                                 "' is neither a header nor an 'interface: counters' line");
        }
        const auto name = text::trim(line.substr(0, colon));
        if (name.empty()) {
            return lineError(source, lineNo, "a counters line without an interface name");
        }
        if (!seen.emplace(name).second) {
            return lineError(source, lineNo, "interface '" + std::string(name) + "' appears twice");
        }

        InterfaceTraffic entry{std::string(name), 0, 0};
        auto rest = line.substr(colon + 1);
        std::size_t count = 0;
        for (auto token = text::nextToken(rest); !token.empty(); token = text::nextToken(rest)) {
            std::uint64_t value = 0;
            if (!text::parseNumber(token, value)) {
                return lineError(source, lineNo,
                                 "field " + std::to_string(count + 1) + " of '" + std::string(name) +
                                     "' is '" + std::string(token) + "', not a counter");
            }
            if (count == 0) {
                entry.receivedBytes = value;
            } else if (count == kSentBytesField) {
                entry.sentBytes = value;
            }
            ++count;
        }
        if (count < kMinFields) {
            return lineError(source, lineNo,
                             "'" + std::string(name) + "' has " + std::to_string(count) +
                                 " counters; at least " + std::to_string(kMinFields) +
                                 " (receive, then transmit) are needed");
        }
        interfaces.push_back(std::move(entry));
    }
    if (!haveHeader) {
        return Error{std::string(source) +
                     " has no 'Inter-|' header: is this really /proc/net/dev? Pass the path of that file."};
    }
    return interfaces;
}

Result<std::vector<InterfaceTraffic>> readNetDev(const std::filesystem::path& path) {
    auto text = readTextFile(path);
    if (!text) {
        return text.error();
    }
    return parseNetDev(*text, path.string());
}

namespace {

/// The sum of @p count over @p interfaces, the loopback interface only with Loopback::Include.
std::uint64_t totalOf(const std::vector<InterfaceTraffic>& interfaces, Loopback loopback,
                      std::uint64_t InterfaceTraffic::*count) {
    std::uint64_t total = 0;
    for (const auto& entry : interfaces) {
        if (loopback == Loopback::Exclude && entry.name == "lo") {
            continue;
        }
        total += entry.*count;
    }
    return total;
}

} // namespace

std::uint64_t totalReceivedBytes(const std::vector<InterfaceTraffic>& interfaces, Loopback loopback) {
    return totalOf(interfaces, loopback, &InterfaceTraffic::receivedBytes);
}

std::uint64_t totalSentBytes(const std::vector<InterfaceTraffic>& interfaces, Loopback loopback) {
    return totalOf(interfaces, loopback, &InterfaceTraffic::sentBytes);
}

Result<std::uint64_t> totalReceivedBytes(const std::filesystem::path& path, Loopback loopback) {
    auto interfaces = readNetDev(path);
    if (!interfaces) {
        return interfaces.error();
    }
    return totalReceivedBytes(*interfaces, loopback);
}

} // namespace nicer::kernel
