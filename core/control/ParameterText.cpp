#include "control/ParameterText.h"

#include "control/ParameterTable.h"
#include "util/KeyValueText.h"
#include "util/Text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

namespace nicer::control {

namespace {

template <typename T>
Result<T> parseValue(std::string_view key, std::string_view value) {
    T v{};
    if (!text::parseNumber(value, v)) {
        return Error{std::string(key) + " = '" + std::string(value) + "' is not " +
                         (std::is_integral_v<T> ? "a whole number" : "a number"),
                     ErrorKind::InvalidInput};
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
        return Error{"period = " + text::shortNumber(seconds) + " is not a duration in seconds",
                     ErrorKind::InvalidInput};
    }
    return std::chrono::milliseconds(std::llround(seconds * 1000.0));
}

Result<void> setParameterFromText(ControllerParams& p, std::string_view key, std::string_view value) {
    value = text::trim(value);
    const ParameterInfo* info = findParameter(key);
    if (!info) {
        return Error{"unknown parameter '" + std::string(key) + "': the parameters are " +
                         parameterNameList(),
                     ErrorKind::InvalidInput};
    }
    if (info->type == ParameterType::Hours) {
        return info->setText(p, value);
    }
    double v = 0;
    if (info->type == ParameterType::Count) {
        auto parsed = parseValue<int>(key, value);
        if (!parsed) {
            return parsed.error();
        }
        v = *parsed;
    } else {
        auto parsed = parseValue<double>(key, value);
        if (!parsed) {
            return parsed.error();
        }
        v = *parsed;
    }
    return info->set(p, v);
}

std::string parameterAsText(const ParameterInfo& info, const ControllerParams& p) {
    if (info.type == ParameterType::Hours) {
        return info.getText(p);
    }
    const double v = info.get(p);
    return info.type == ParameterType::Count ? std::to_string(static_cast<long long>(v)) : exact(v);
}

std::vector<std::pair<std::string, std::string>> parametersAsText(const ControllerParams& p) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const auto& info : parameterTable()) {
        pairs.emplace_back(info.key, parameterAsText(info, p));
    }
    return pairs;
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
        return valid.error().within(source + ": ");
    }
    return params;
}

Result<ControllerParams> readSavedParameterFile(const std::string& text, const std::string& source,
                                                ControllerParams params) {
    if (auto whole = text::requireWholeLines(text, source); !whole) {
        return whole.error();
    }
    auto read = readParameterFile(text, source, std::move(params));
    if (!read) {
        return read;
    }
    std::vector<std::string> seen;
    (void)text::forEachKeyValueLine(text, source, "key = value", [&](const text::KeyValueLine& line) {
        seen.emplace_back(line.key);
        return Result<void>{};
    });
    for (const auto& info : parameterTable()) {
        if (!info.newerThanSavedFiles && std::find(seen.begin(), seen.end(), info.key) == seen.end()) {
            return Error{source + ": no line for " + std::string(info.key) +
                         ", but nicerd writes every parameter: the file was cut short or edited"};
        }
    }
    return read;
}

std::string writeParameterFile(const ControllerParams& params) {
    std::string text = "# Controller parameters set at run time (nicer set, the tray). Written by nicerd.\n";
    // The parameters newer than the first saved files first: a file cut short at a line's end then lacks one
    // that every file has, and readSavedParameterFile refuses it rather than take the defaults for the rest.
    for (const bool newer : {true, false}) {
        for (const auto& info : parameterTable()) {
            if (info.newerThanSavedFiles == newer) {
                text.append(info.key).append(" = ").append(parameterAsText(info, params)).append("\n");
            }
        }
    }
    return text;
}

} // namespace nicer::control
