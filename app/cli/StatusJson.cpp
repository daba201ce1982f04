#include "StatusJson.h"

#include "BoincCommands.h"
#include "api/BusStruct.h"
#include "api/Keywords.h"
#include "control/ParameterTable.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <variant>

namespace nicer::cli {

namespace {

constexpr std::string_view kBoincPrefix = "Boinc";

/// The properties whose value stands for "none" or "not known" at some values: those are null in JSON.
struct NoneWhen {
    std::string_view property;
    bool (*none)(double value);
};

const std::array<NoneWhen, 12> kNoneWhen = {{
    {"MemoryStallBeside", [](double v) { return v < 0.0; }},
    {"PausedUntil", [](double v) { return v <= 0.0; }},
    {"MemoryMax", [](double v) { return v <= 0.0; }},
    {"MemoryHigh", [](double v) { return v <= 0.0; }},
    {"WorkMemory", [](double v) { return v <= 0.0; }},
    {"MemoryHoldLimit", [](double v) { return v <= 0.0; }},
    {"Outside", [](double v) { return v < 0.0; }},
    {"BandwidthCap", [](double v) { return v <= 0.0; }},
    {"Temperature", [](double v) { return v == api::kNoTemperature; }},
    {"TemperatureTargetInUse", [](double v) { return v <= 0.0; }},
    {"FanSpeed", [](double v) { return v < 0.0; }},
    {"BatteryPercent", [](double v) { return v < 0.0; }},
}};

/// A field's value as JSON: an enum as its keyword, an optional count as null when there is none, a bus
/// struct as an object keyed by its fields' names (api::BusField).
template <typename T>
nlohmann::json toJson(const T& value) {
    if constexpr (api::KeywordEnum<T>) {
        return std::string(api::busKeyword(value));
    } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
        return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
    } else if constexpr (api::BusStruct<T>) {
        nlohmann::json object = nlohmann::json::object();
        api::forEachField<T>(
            [&](const auto& field) { object[std::string(field.name)] = toJson(value.*field.member); });
        return object;
    } else if constexpr (api::IsVector<T>::value && !std::is_same_v<T, std::vector<std::string>>) {
        nlohmann::json array = nlohmann::json::array();
        for (const auto& item : value) {
            array.push_back(toJson(item));
        }
        return array;
    } else {
        return value;
    }
}

/// A parameter's value in its text unit: a count as an integer.
nlohmann::json parameterJson(const control::ParameterInfo& info, const control::ControllerParams& params) {
    if (info.type == control::ParameterType::Hours) {
        return info.getText(params);
    }
    const double value = info.get(params);
    if (info.type == control::ParameterType::Count) {
        return static_cast<long long>(value);
    }
    return value;
}

/// @p property's value in @p state as JSON, null where it means none.
nlohmann::json propertyJson(const api::PropertyInfo& property, const api::DaemonState& state) {
    return std::visit(
        [&](const auto& field) -> nlohmann::json {
            using F = std::decay_t<decltype(field)>;
            if constexpr (std::is_same_v<F, const control::ParameterInfo*>) {
                return parameterJson(*field, state.params);
            } else {
                const auto& value = api::valueOf(field, state);
                using T = std::decay_t<decltype(value)>;
                if constexpr (std::is_arithmetic_v<T>) {
                    const auto rule =
                        std::find_if(kNoneWhen.begin(), kNoneWhen.end(),
                                     [&](const NoneWhen& n) { return n.property == property.name; });
                    if (rule != kNoneWhen.end() && rule->none(static_cast<double>(value))) {
                        return nullptr;
                    }
                }
                return toJson(value);
            }
        },
        property.field);
}

} // namespace

std::string jsonKey(std::string_view propertyName) {
    std::string key;
    for (std::size_t i = 0; i < propertyName.size(); ++i) {
        const auto c = static_cast<unsigned char>(propertyName[i]);
        if (std::isupper(c) != 0) {
            if (i > 0) {
                key += '_';
            }
            key += static_cast<char>(std::tolower(c));
        } else {
            key += static_cast<char>(c);
        }
    }
    return key;
}

std::vector<std::string> statusJsonPath(const api::PropertyInfo& property) {
    const std::string_view name = property.name;
    if (const auto* const* parameter = std::get_if<const control::ParameterInfo*>(&property.field)) {
        // Snake case, the period with its unit: reserve_band, ..., period_s.
        std::string key = (*parameter)->key;
        std::replace(key.begin(), key.end(), '-', '_');
        return {"parameters", (*parameter)->type == control::ParameterType::Duration ? key + "_s" : key};
    }
    if (name.starts_with(kBoincPrefix)) {
        return {"boinc", jsonKey(name.substr(kBoincPrefix.size()))};
    }
    const auto renamed = std::find_if(kStatusJsonRenamings.begin(), kStatusJsonRenamings.end(),
                                      [&](const JsonRenaming& r) { return r.property == name; });
    return {renamed != kStatusJsonRenamings.end() ? std::string(renamed->key) : jsonKey(name)};
}

nlohmann::json statusJson(const api::DaemonState& state) {
    nlohmann::json json = nlohmann::json::object();
    json["parameters"] = nlohmann::json::object();
    for (const auto& property : api::daemonProperties()) {
        const auto path = statusJsonPath(property);
        if (path.front() == "boinc") {
            continue; // boincJson has them, as `nicer boinc --json` shows them
        }
        nlohmann::json* at = &json;
        for (std::size_t i = 0; i + 1 < path.size(); ++i) {
            at = &(*at)[path[i]];
        }
        (*at)[path.back()] = propertyJson(property, state);
    }
    json["boinc"] = boincJson(state.boinc);
    return json;
}

} // namespace nicer::cli
