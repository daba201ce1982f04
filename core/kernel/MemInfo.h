#pragma once

#include "util/Result.h"

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace nicer::kernel {

/// MemTotal of /proc/meminfo's text, in bytes.
Result<std::uint64_t> parseMemTotal(std::string_view meminfo);
/// The machine's memory in bytes: MemTotal of @p meminfo, else sysconf's physical pages x the page size.
Result<std::uint64_t> machineMemoryBytes(const std::filesystem::path& meminfo = "/proc/meminfo");

} // namespace nicer::kernel
