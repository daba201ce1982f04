#pragma once

#include "util/Result.h"

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace nicer::kernel {

/// @p field ("MemTotal", "SwapTotal") of /proc/meminfo's text, in bytes.
Result<std::uint64_t> parseMeminfoBytes(std::string_view meminfo, std::string_view field);
/// MemTotal of /proc/meminfo's text, in bytes (never 0).
Result<std::uint64_t> parseMemTotal(std::string_view meminfo);
/// The machine's memory in bytes: MemTotal of @p meminfo, else sysconf's physical pages x the page size.
Result<std::uint64_t> machineMemoryBytes(const std::filesystem::path& meminfo = "/proc/meminfo");
/// The machine's swap in bytes (SwapTotal of @p meminfo): 0 without swap.
Result<std::uint64_t> swapBytes(const std::filesystem::path& meminfo = "/proc/meminfo");

/// What the memory rule reads of /proc/meminfo each period, in bytes.
struct MemoryFigures {
    std::uint64_t total = 0;     ///< MemTotal
    std::uint64_t available = 0; ///< MemAvailable: free, and what the kernel can reclaim without swapping
    std::uint64_t swap = 0;      ///< SwapTotal
};
Result<MemoryFigures> readMemoryFigures(const std::filesystem::path& meminfo = "/proc/meminfo");

} // namespace nicer::kernel
