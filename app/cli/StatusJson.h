#pragma once

#include "api/DaemonProperties.h"
#include "api/DaemonState.h"

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::cli {

/// "TemperatureTarget" -> "temperature_target": a property's key in `nicer status --json`.
std::string jsonKey(std::string_view propertyName);

/// A key of `nicer status --json` that is not its property's name in snake case (docs/user-guide.md lists
/// them): only where the name alone would mislead.
struct JsonRenaming {
    std::string_view property;
    std::string_view key;
};

inline constexpr std::array<JsonRenaming, 4> kStatusJsonRenamings = {{
    // Its unit, as the parameters' durations have theirs (period_s): memory_max_percent stands beside it.
    {"MemoryMax", "memory_max_bytes"},
    // The same unit, beside the memory shares of the profiles (parameters.memory_share).
    {"MemoryHigh", "memory_high_bytes"},
    // The memory rule's figures in bytes, beside its stall (a share).
    {"WorkMemory", "work_memory_bytes"},
    {"MemoryHoldLimit", "memory_hold_limit_bytes"},
}};

/// Where @p property's value stands in `nicer status --json`: {"paused"}; a parameter under "parameters" by
/// its text key ({"parameters", "reserve_band"}, a duration with "_s": "period_s"); a Boinc* property under
/// "boinc" without the prefix ({"boinc", "max_down_rate"}, as `nicer boinc --json` has it).
std::vector<std::string> statusJsonPath(const api::PropertyInfo& property);

/// `nicer status --json`: every property of @p state at its statusJsonPath. A value that means "none" or
/// "not known" (-1, 0 or no temperature, as the interface's XML says per property) is null.
nlohmann::json statusJson(const api::DaemonState& state);

} // namespace nicer::cli
