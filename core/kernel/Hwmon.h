#pragma once

#include "util/Result.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nicer::kernel {

/// Where the kernel lists its hardware monitors and its thermal zones.
inline constexpr const char* kHwmonDir = "/sys/class/hwmon";
inline constexpr const char* kThermalDir = "/sys/class/thermal";

/// A temperature sensor nicerd can read without root: an hwmon temp*_input or a thermal zone's temp, both in
/// millidegrees Celsius.
struct TemperatureSensor {
    std::filesystem::path input;
    /// For people: "coretemp Package id 0", "k10temp Tctl", "thermal zone x86_pkg_temp".
    std::string name;
    /// The sensor's own limits in °C where it has them (hwmon's temp*_max and temp*_crit; a thermal zone's
    /// critical trip point).
    std::optional<double> max;
    std::optional<double> crit;
};

/// A fan's speed sensor: an hwmon fan*_input, in rpm.
struct FanSensor {
    std::filesystem::path input;
    std::string name; ///< "thinkpad fan1", "dell_smm fan2 (Processor Fan)"
};

/**
 * The CPU's package temperature: the first found of coretemp's "Package id" sensor (Intel), k10temp's or
 * zenpower's Tctl/Tdie (AMD), cpu_thermal or another CPU driver's first sensor (ARM boards), and, where no
 * hwmon device is a CPU's, the thermal zone of type x86_pkg_temp, cpu-thermal, soc_thermal or acpitz, in
 * that order. An error, saying what was looked for and where, when there is none (a VM, a container without
 * /sys/class/hwmon): nicerd then runs without the temperature rule.
 */
Result<TemperatureSensor> findCpuTemperature(const std::filesystem::path& hwmonDir = kHwmonDir,
                                             const std::filesystem::path& thermalDir = kThermalDir);

/// @p input given by the volunteer (nicerd --temperature-sensor): an hwmon temp*_input or a thermal zone's
/// temp (or its zone directory), checked by reading it; its limits are read beside it.
Result<TemperatureSensor> temperatureSensorAt(const std::filesystem::path& input);

/// One reading in °C; an error that says the file is not a temperature sensor when it holds no whole number
/// of millidegrees between -50 °C and 200 °C.
Result<double> readTemperature(const std::filesystem::path& input);

/// Every fan that reports its speed under @p hwmonDir, in the directory's order.
std::vector<FanSensor> findFans(const std::filesystem::path& hwmonDir = kHwmonDir);

/// One reading in rpm; an error when the file holds no whole number between 0 and 100000.
Result<double> readFan(const std::filesystem::path& input);

} // namespace nicer::kernel
