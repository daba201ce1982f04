#include "kernel/Hwmon.h"

#include "util/Text.h"
#include "util/TextFile.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace nicer::kernel {

namespace fs = std::filesystem;

namespace {

/// The first line of @p path without its newline; empty when it cannot be read.
std::string firstLine(const fs::path& path) {
    auto text = readTextFile(path);
    if (!text) {
        return {};
    }
    return std::string(text::trim(std::string_view(*text).substr(0, text->find('\n'))));
}

/// A whole number in @p path within [lo, hi], else an error naming the file and what it should hold.
Result<double> readWhole(const fs::path& path, std::int64_t lo, std::int64_t hi, const char* what) {
    auto text = readTextFile(path);
    if (!text) {
        return Error{"cannot read " + path.string() + ": " + text.error().message};
    }
    std::int64_t value = 0;
    if (!text::parseNumber(text::trim(*text), value) || value < lo || value > hi) {
        return Error{path.string() + " is not " + what + ": it holds '" +
                     std::string(text::trim(std::string_view(*text).substr(0, 40))) + "'"};
    }
    return static_cast<double>(value);
}

/// A limit in millidegrees beside a sensor, in °C; none when absent, unreadable or 0 (not set).
std::optional<double> limitAt(const fs::path& path) {
    std::int64_t value = 0;
    const std::string line = firstLine(path);
    if (line.empty() || !text::parseNumber(line, value) || value <= 0 || value > 200'000) {
        return std::nullopt;
    }
    return static_cast<double>(value) / 1000.0;
}

/// "temp1_input" -> "temp1": the prefix its label, max and crit files share.
std::string sensorPrefix(const fs::path& input) {
    const std::string name = input.filename().string();
    return name.substr(0, name.find('_'));
}

TemperatureSensor hwmonSensor(const fs::path& input, const std::string& driver) {
    const fs::path dir = input.parent_path();
    const std::string prefix = sensorPrefix(input);
    const std::string label = firstLine(dir / (prefix + "_label"));
    return {.input = input,
            .name = driver + " " + (label.empty() ? prefix : label),
            .max = limitAt(dir / (prefix + "_max")),
            .crit = limitAt(dir / (prefix + "_crit"))};
}

/// The hwmon devices under @p dir, sorted (hwmon0, hwmon1, ...: the order the kernel made them).
std::vector<fs::path> entries(const fs::path& dir) {
    std::vector<fs::path> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        found.push_back(entry.path());
    }
    std::sort(found.begin(), found.end());
    return found;
}

/// The temp*_input files of one hwmon device, sorted by number.
std::vector<fs::path> temperatureInputs(const fs::path& device) {
    std::vector<fs::path> inputs;
    for (const auto& file : entries(device)) {
        const std::string name = file.filename().string();
        if (name.starts_with("temp") && name.ends_with("_input")) {
            inputs.push_back(file);
        }
    }
    std::sort(inputs.begin(), inputs.end(), [](const fs::path& a, const fs::path& b) {
        const auto number = [](const fs::path& p) {
            int n = 0;
            (void)text::parseNumber(sensorPrefix(p).substr(4), n);
            return n;
        };
        return number(a) < number(b);
    });
    return inputs;
}

/// The CPU's sensor of one hwmon device by its driver's name, if the driver is a CPU's.
std::optional<TemperatureSensor> cpuSensorOf(const fs::path& device) {
    const std::string driver = firstLine(device / "name");
    constexpr std::array<std::string_view, 2> kAmd = {"k10temp", "zenpower"};
    constexpr std::array<std::string_view, 3> kBoards = {"cpu_thermal", "cpu-thermal", "soc_thermal"};
    const auto inputs = temperatureInputs(device);
    if (inputs.empty()) {
        return std::nullopt;
    }
    const auto labelled = [&](std::initializer_list<std::string_view> prefixes) -> std::optional<fs::path> {
        for (const auto& input : inputs) {
            const std::string label = firstLine(device / (sensorPrefix(input) + "_label"));
            for (const auto prefix : prefixes) {
                if (label.starts_with(prefix)) {
                    return input;
                }
            }
        }
        return std::nullopt;
    };
    if (driver == "coretemp") {
        return hwmonSensor(labelled({"Package id"}).value_or(inputs.front()), driver);
    }
    if (std::find(kAmd.begin(), kAmd.end(), driver) != kAmd.end()) {
        return hwmonSensor(labelled({"Tctl", "Tdie"}).value_or(inputs.front()), driver);
    }
    if (std::find(kBoards.begin(), kBoards.end(), driver) != kBoards.end()) {
        return hwmonSensor(inputs.front(), driver);
    }
    return std::nullopt;
}

/// A thermal zone's sensor, with its critical trip point as crit.
TemperatureSensor zoneSensor(const fs::path& zone) {
    TemperatureSensor sensor{
        .input = zone / "temp", .name = "thermal zone " + firstLine(zone / "type"), .max = {}, .crit = {}};
    for (int i = 0; i < 16; ++i) {
        const std::string trip = "trip_point_" + std::to_string(i);
        if (firstLine(zone / (trip + "_type")) == "critical") {
            sensor.crit = limitAt(zone / (trip + "_temp"));
            break;
        }
    }
    return sensor;
}

} // namespace

Result<TemperatureSensor> findCpuTemperature(const fs::path& hwmonDir, const fs::path& thermalDir) {
    for (const auto& device : entries(hwmonDir)) {
        if (auto sensor = cpuSensorOf(device); sensor && readTemperature(sensor->input)) {
            return *sensor;
        }
    }
    constexpr std::array<std::string_view, 4> kZones = {"x86_pkg_temp", "cpu-thermal", "soc_thermal",
                                                        "acpitz"};
    const auto zones = entries(thermalDir);
    for (const auto type : kZones) {
        for (const auto& zone : zones) {
            if (zone.filename().string().starts_with("thermal_zone") && firstLine(zone / "type") == type &&
                readTemperature(zone / "temp")) {
                return zoneSensor(zone);
            }
        }
    }
    return Error{"no CPU temperature sensor: no coretemp, k10temp, zenpower or cpu_thermal device in " +
                 hwmonDir.string() + " and no x86_pkg_temp, cpu-thermal, soc_thermal or acpitz zone in " +
                 thermalDir.string() +
                 " (a virtual machine or a container shows none; nicerd --temperature-sensor names one)"};
}

Result<TemperatureSensor> temperatureSensorAt(const fs::path& given) {
    std::error_code ec;
    const bool zoneDir = fs::is_directory(given, ec) && fs::exists(given / "temp", ec);
    const fs::path input = zoneDir ? given / "temp" : given;
    if (auto reading = readTemperature(input); !reading) {
        return Error{"--temperature-sensor: " + reading.error().message +
                     " (give an hwmon temp*_input file or a thermal zone's temp)"};
    }
    const std::string file = input.filename().string();
    if (file.starts_with("temp") && file.ends_with("_input")) {
        const std::string driver = firstLine(input.parent_path() / "name");
        return hwmonSensor(input, driver.empty() ? input.parent_path().filename().string() : driver);
    }
    return zoneSensor(input.parent_path());
}

Result<double> readTemperature(const fs::path& input) {
    auto milli = readWhole(input, -50'000, 200'000, "a temperature sensor (millidegrees Celsius)");
    if (!milli) {
        return milli.error();
    }
    return *milli / 1000.0;
}

std::vector<FanSensor> findFans(const fs::path& hwmonDir) {
    std::vector<FanSensor> fans;
    for (const auto& device : entries(hwmonDir)) {
        const std::string driver = firstLine(device / "name");
        for (const auto& file : entries(device)) {
            const std::string name = file.filename().string();
            if (!name.starts_with("fan") || !name.ends_with("_input") || !readFan(file)) {
                continue;
            }
            const std::string prefix = sensorPrefix(file);
            const std::string label = firstLine(device / (prefix + "_label"));
            std::string fanName = driver;
            fanName += " ";
            fanName += prefix;
            if (!label.empty()) {
                fanName += " (";
                fanName += label;
                fanName += ")";
            }
            fans.push_back({.input = file, .name = std::move(fanName)});
        }
    }
    return fans;
}

Result<double> readFan(const fs::path& input) {
    return readWhole(input, 0, 100'000, "a fan speed sensor (rpm)");
}

} // namespace nicer::kernel
