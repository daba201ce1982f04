// `nicer status --json` against the property table: every key is a property's (its name in snake case, or a
// renaming app/cli/StatusJson.h lists and docs/user-guide.md names), it holds that property's value, and
// there is no other key.

#include "StatusJson.h"
#include "api/DaemonProperties.h"
#include "api/DaemonState.h"
#include "control/ParameterTable.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

using namespace nicer;

namespace {

/// A state whose every property has a value of its own, none of them one that means "none".
api::DaemonState distinctState() {
    api::DaemonState state;
    int n = 0;
    for (const auto& property : api::daemonProperties()) {
        ++n;
        std::visit(
            [&](const auto& field) {
                using F = std::decay_t<decltype(field)>;
                if constexpr (!std::is_same_v<F, const control::ParameterInfo*>) {
                    auto& value = field(state);
                    using T = std::decay_t<decltype(value)>;
                    if constexpr (std::is_same_v<T, bool>) {
                        value = !value;
                    } else if constexpr (std::is_arithmetic_v<T>) {
                        value = static_cast<T>(100 + n);
                    } else if constexpr (std::is_same_v<T, std::string>) {
                        value = std::string("text of ") + property.name;
                    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                        value = {property.name, "second"};
                    } else if constexpr (api::KeywordEnum<T>) {
                        // Not the state's default.
                        value = static_cast<T>(value == static_cast<T>(1) ? 2 : 1);
                    } else {
                        value.resize(static_cast<std::size_t>(n % 3 + 1));
                    }
                }
            },
            property.field);
    }
    return state;
}

/// What @p property's value in @p state must read as, told apart by its type alone.
nlohmann::json expected(const api::PropertyInfo& property, const api::DaemonState& state) {
    return std::visit(
        [&](const auto& field) -> nlohmann::json {
            using F = std::decay_t<decltype(field)>;
            if constexpr (std::is_same_v<F, const control::ParameterInfo*>) {
                if (field->type == control::ParameterType::Hours) {
                    return field->getText(state.params);
                }
                const double value = field->get(state.params);
                return field->type == control::ParameterType::Count
                           ? nlohmann::json(static_cast<long long>(value))
                           : nlohmann::json(value);
            } else {
                const auto& value = api::valueOf(field, state);
                using T = std::decay_t<decltype(value)>;
                if constexpr (api::KeywordEnum<T>) {
                    return std::string(api::BusKeywords<T>::keywords[static_cast<std::size_t>(value)]);
                } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string> ||
                                     std::is_same_v<T, std::vector<std::string>>) {
                    return value;
                } else {
                    return value.size(); // the entries' fields: the next test case
                }
            }
        },
        property.field);
}

const nlohmann::json* at(const nlohmann::json& json, const std::vector<std::string>& path) {
    const nlohmann::json* node = &json;
    for (const auto& key : path) {
        if (!node->is_object() || !node->contains(key)) {
            return nullptr;
        }
        node = &(*node)[key];
    }
    return node;
}

} // namespace

TEST_CASE("every key of nicer status --json is a property's, by its name or a listed renaming, and holds its "
          "value",
          "[cli][status]") {
    const auto state = distinctState();
    const auto json = cli::statusJson(state);
    std::set<std::vector<std::string>> paths;
    for (const auto& property : api::daemonProperties()) {
        const std::string name = property.name;
        INFO("property " << name);
        const auto path = cli::statusJsonPath(property);
        CHECK(paths.insert(path).second); // no two properties share a key
        // The key: the name in snake case, the groups' keys without their prefix, or a listed renaming.
        const bool isParameter = std::holds_alternative<const control::ParameterInfo*>(property.field);
        if (isParameter) {
            CHECK(path.size() == 2);
            CHECK(path.front() == "parameters");
        } else if (name.starts_with("Boinc")) {
            CHECK(path == std::vector<std::string>{"boinc", cli::jsonKey(name.substr(5))});
        } else {
            std::string key = cli::jsonKey(name);
            for (const auto& renaming : cli::kStatusJsonRenamings) {
                if (renaming.property == name) {
                    key = renaming.key;
                }
            }
            CHECK(path == std::vector<std::string>{key});
        }
        // The value.
        const auto* value = at(json, path);
        REQUIRE(value != nullptr);
        const auto want = expected(property, state);
        if (want.is_number_unsigned() && value->is_array()) {
            CHECK(value->size() == want.get<std::size_t>());
        } else {
            CHECK(*value == want);
        }
    }
    // No other key: at the top, under "parameters" and under "boinc".
    for (const auto& [key, value] : json.items()) {
        INFO("key " << key);
        if (key == "parameters" || key == "boinc") {
            for (const auto& [inner, ignored] : value.items()) {
                INFO("key " << key << "." << inner);
                CHECK(paths.count({key, inner}) == 1);
            }
        } else {
            CHECK(paths.count({key}) == 1);
        }
    }
}

TEST_CASE("each renaming in nicer status --json names a property and a key no other property has",
          "[cli][status]") {
    std::set<std::string> keys;
    for (const auto& property : api::daemonProperties()) {
        keys.insert(cli::jsonKey(property.name));
    }
    for (const auto& renaming : cli::kStatusJsonRenamings) {
        INFO(renaming.property << " -> " << renaming.key);
        CHECK(api::findProperty(renaming.property) != nullptr);
        CHECK(keys.count(std::string(renaming.key)) == 0);
    }
    CHECK(cli::jsonKey("TemperatureTarget") == "temperature_target");
    CHECK(cli::jsonKey("ApiVersion") == "api_version");
}

TEST_CASE("nicer status --json writes null where a value means none, and the downloads field by field",
          "[cli][status]") {
    api::DaemonState state; // outside, temperature, fan and battery unknown; no memory limit or cap
    api::DownloadEntry failed;
    failed.name = "a.bin";
    failed.bytesDone = 5;
    failed.bytesTotal = 10;
    failed.state = api::DownloadState::Failed;
    failed.reason = "404";
    state.downloads = {failed};
    const auto json = cli::statusJson(state);
    for (const char* key :
         {"outside", "temperature", "temperature_target_in_use", "fan_speed", "battery_percent",
          "memory_max_bytes", "memory_high_bytes", "bandwidth_cap", "paused_until"}) {
        INFO(key);
        CHECK(json.at(key).is_null());
    }
    CHECK(json.at("downloads") ==
          nlohmann::json::parse(R"([{"name": "a.bin", "bytes_done": 5, "bytes_total": 10,
        "rate": 0.0, "state": "failed", "verified": false, "reason": "404", "retry_in_s": null}])"));
    state.downloads[0].retryInSeconds = 600;
    CHECK(cli::statusJson(state).at("downloads")[0].at("retry_in_s") == 600);
}

TEST_CASE("the keys the VM and packaging checks read are there", "[cli][status]") {
    const auto json = cli::statusJson(api::DaemonState{});
    for (const char* key :
         {"actuator", "actuator_note", "placement", "placement_note", "paused", "held_by", "signal"}) {
        INFO(key);
        CHECK(json.contains(key));
    }
    CHECK(json.at("parameters").contains("reserve_band"));
}
