#include "desktop/PowerSupplies.h"

#include "util/Text.h"
#include "util/TextFile.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

namespace nicer::desktop {

namespace fs = std::filesystem;

namespace {

/// One attribute of a supply, trimmed; empty where the file is missing or unreadable.
std::string attribute(const fs::path& supply, const char* name) {
    auto text = readTextFile(supply / name);
    return text ? std::string(text::trim(*text)) : std::string();
}

std::optional<double> number(const fs::path& supply, const char* name) {
    double value = 0;
    if (text::parseNumber(attribute(supply, name), value)) {
        return value;
    }
    return std::nullopt;
}

/// A system battery's charge in percent (capacity, else now/full of energy or charge), and its full energy.
struct Battery {
    std::optional<double> percent;
    std::optional<double> energyFull;
};

Battery readBattery(const fs::path& supply) {
    Battery battery{number(supply, "capacity"), number(supply, "energy_full")};
    for (const auto& [now, full] :
         {std::pair{"energy_now", "energy_full"}, std::pair{"charge_now", "charge_full"}}) {
        const auto have = number(supply, now);
        const auto of = number(supply, full);
        if (!battery.percent && have && of && *of > 0) {
            battery.percent = *have * 100.0 / *of;
        }
    }
    if (battery.percent) {
        battery.percent = std::clamp(*battery.percent, 0.0, 100.0);
    }
    return battery;
}

/// The batteries' charge: weighted by full energy where each gives it, else their mean; -1 without one.
double combinedPercent(const std::vector<Battery>& batteries) {
    double sum = 0;
    double weights = 0;
    const bool weighted = std::all_of(batteries.begin(), batteries.end(),
                                      [](const Battery& b) { return b.energyFull && *b.energyFull > 0; });
    for (const auto& battery : batteries) {
        if (battery.percent) {
            const double weight = weighted ? *battery.energyFull : 1.0;
            sum += *battery.percent * weight;
            weights += weight;
        }
    }
    return weights > 0 ? sum / weights : -1.0;
}

} // namespace

PowerState readPowerSupplies(const fs::path& dir, std::string& note) {
    note.clear();
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        note = "no " + dir.string() + ": no battery information";
        return {};
    }
    if (!fs::is_directory(dir, ec)) {
        note = dir.string() + " is not a directory: no battery information";
        return {};
    }
    bool found = false;
    bool externalOnline = false;
    bool discharging = false;
    std::vector<Battery> batteries;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path& supply = it->path();
        const std::string type = attribute(supply, "type");
        // A peripheral's battery or charger (a mouse, a phone on USB) says nothing of the machine's power.
        if (type.empty() || attribute(supply, "scope") == "Device") {
            continue;
        }
        found = true;
        if (type == "Battery") {
            if (attribute(supply, "present") == "0") {
                continue; // an empty battery bay
            }
            discharging = discharging || attribute(supply, "status") == "Discharging";
            batteries.push_back(readBattery(supply));
        } else if (type != "UPS") {
            // Mains, USB (and its USB_PD, USB_C, ... of older kernels), Wireless: external power.
            externalOnline = externalOnline || attribute(supply, "online") == "1";
        }
    }
    if (ec) {
        note = "cannot read " + dir.string() + " (" + ec.message() + "): no battery information";
        return {};
    }
    if (!found) {
        note = "nothing like a power supply in " + dir.string() +
               " (no entry with a type): no battery information";
        return {};
    }
    PowerState state;
    state.onBattery = discharging && !externalOnline;
    state.percent = combinedPercent(batteries);
    state.source = dir.string();
    return state;
}

} // namespace nicer::desktop
