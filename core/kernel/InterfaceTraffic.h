#pragma once

#include "util/Result.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::kernel {

/// Cumulative byte counters of one network interface, from one read of /proc/net/dev.
struct InterfaceTraffic {
    std::string name;
    std::uint64_t receivedBytes = 0;
    std::uint64_t sentBytes = 0;

    bool operator==(const InterfaceTraffic&) const = default;
};

/// Whether the loopback interface counts towards a machine's traffic.
enum class Loopback { Exclude, Include };

/// Where Linux publishes the counters of the network namespace the process runs in.
inline constexpr std::string_view kProcNetDev = "/proc/net/dev";

/// Parses the text of /proc/net/dev, one entry per interface in file order. Errors name @p source and the
/// line.
Result<std::vector<InterfaceTraffic>> parseNetDev(std::string_view text,
                                                  std::string_view source = kProcNetDev);

/// Reads and parses the file at @p path (normally /proc/net/dev).
Result<std::vector<InterfaceTraffic>> readNetDev(const std::filesystem::path& path);

/// Bytes received by all @p interfaces together; the loopback interface ("lo") only with
/// Loopback::Include, since traffic between local programs never crosses the link.
std::uint64_t totalReceivedBytes(const std::vector<InterfaceTraffic>& interfaces,
                                 Loopback loopback = Loopback::Exclude);

/// Bytes sent by all @p interfaces together, the loopback interface only with Loopback::Include.
std::uint64_t totalSentBytes(const std::vector<InterfaceTraffic>& interfaces,
                             Loopback loopback = Loopback::Exclude);

/// Reads @p path and returns the bytes received by its interfaces (see the overload above).
Result<std::uint64_t> totalReceivedBytes(const std::filesystem::path& path = kProcNetDev,
                                         Loopback loopback = Loopback::Exclude);

/// How far a cumulative counter moved from @p before to @p after; 0 when it went backwards (an interface
/// went away, a driver reset or a 32-bit counter wrapped), so one odd read costs one period, not a jump.
constexpr std::uint64_t counterDelta(std::uint64_t before, std::uint64_t after) {
    return after >= before ? after - before : 0;
}

} // namespace nicer::kernel
