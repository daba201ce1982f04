#include "control/ParameterText.h"

#include "util/KeyValueText.h"
#include "util/Text.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace nicer::control {

namespace {

template <typename T>
Result<T> parseValue(std::string_view key, std::string_view value) {
    T v{};
    if (!text::parseNumber(value, v)) {
        return Error{std::string(key) + " = '" + std::string(value) + "' is not " +
                     (std::is_integral_v<T> ? "a whole number" : "a number")};
    }
    return v;
}

/// The shortest text that reads back as exactly @p v.
std::string exact(double v) {
    char buf[40];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc{} ? std::string(buf, end) : std::to_string(v);
}

} // namespace

Result<std::chrono::milliseconds> periodFromSeconds(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e6) {
        char text[32];
        std::snprintf(text, sizeof text, "%g", seconds);
        return Error{"period = " + std::string(text) + " is not a duration in seconds"};
    }
    return std::chrono::milliseconds(std::llround(seconds * 1000.0));
}

Result<void> setParameterFromText(ControllerParams& p, std::string_view key, std::string_view value) {
    value = text::trim(value);
    const auto assign = [&](auto& field) -> Result<void> {
        auto parsed = parseValue<std::remove_reference_t<decltype(field)>>(key, value);
        if (!parsed) {
            return parsed.error();
        }
        field = *parsed;
        return {};
    };
    if (key == "reserve-band") {
        return assign(p.reserveBand);
    }
    if (key == "min-multiplier") {
        return assign(p.minMultiplier);
    }
    if (key == "max-multiplier") {
        return assign(p.maxMultiplier);
    }
    if (key == "overload-threshold") {
        return assign(p.overloadThreshold);
    }
    if (key == "idle-epsilon") {
        return assign(p.idleEpsilon);
    }
    if (key == "period") {
        auto seconds = parseValue<double>(key, value);
        if (!seconds) {
            return seconds.error();
        }
        auto period = periodFromSeconds(*seconds);
        if (!period) {
            return period.error();
        }
        p.period = *period;
        return {};
    }
    std::string known;
    for (const auto k : kParameterKeys) {
        known += (known.empty() ? "" : ", ") + std::string(k);
    }
    return Error{"unknown parameter '" + std::string(key) + "': the parameters are " + known};
}

std::vector<std::pair<std::string, std::string>> parametersAsText(const ControllerParams& p) {
    return {{"reserve-band", exact(p.reserveBand)},
            {"min-multiplier", exact(p.minMultiplier)},
            {"max-multiplier", exact(p.maxMultiplier)},
            {"overload-threshold", std::to_string(p.overloadThreshold)},
            {"idle-epsilon", exact(p.idleEpsilon)},
            {"period", exact(static_cast<double>(p.period.count()) / 1000.0)}};
}

Result<ControllerParams> readParameterFile(const std::string& text, const std::string& source,
                                           ControllerParams params) {
    if (auto read = text::forEachKeyValueLine(text, source, "key = value",
                                              [&](const text::KeyValueLine& line) {
                                                  return setParameterFromText(params, line.key, line.value);
                                              });
        !read) {
        return read.error();
    }
    if (auto valid = validate(params); !valid) {
        return Error{source + ": " + valid.error().message};
    }
    return params;
}

std::string writeParameterFile(const ControllerParams& params) {
    std::string text = "# Controller parameters set at run time (nicer set, the tray). Written by nicerd.\n";
    for (const auto& [key, value] : parametersAsText(params)) {
        text += key + " = " + value + "\n";
    }
    return text;
}

} // namespace nicer::control
