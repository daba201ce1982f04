#pragma once

#include "api/BusStruct.h"

#include <string>
#include <tuple>

namespace nicer::api {

/// One workload nicerd can be switched to, a preset or "custom", as a client shows it (the tray's combo box,
/// `nicer workload`): one entry of the WorkloadPresets property.
struct PresetInfo {
    std::string id;
    std::string name;
    std::string description;
    bool available = false; ///< its program is installed (custom: nicerd was given a command)

    bool operator==(const PresetInfo&) const = default;

    static constexpr auto kBusFields = std::tuple{
        busField("id", &PresetInfo::id),
        busField("name", &PresetInfo::name),
        busField("description", &PresetInfo::description),
        busField("available", &PresetInfo::available),
    };
};

} // namespace nicer::api
