#include "fakes/FakeCgroupTree.h"
#include "kernel/Hwmon.h"

#include <catch2/catch.hpp>

using namespace nicer::kernel;

// Scratch directories stand in for /sys/class/hwmon and /sys/class/thermal, with the files the kernel's
// drivers make (coretemp, k10temp, thinkpad, thermal zones).

TEST_CASE("coretemp's package sensor is the CPU's temperature, with its own limits") {
    nicer::test::FakeCgroupTree sys;
    sys.write("hwmon/hwmon0/name", "acpitz\n");
    sys.write("hwmon/hwmon0/temp1_input", "27800\n");
    sys.write("hwmon/hwmon1/name", "coretemp\n");
    sys.write("hwmon/hwmon1/temp2_input", "51000\n");
    sys.write("hwmon/hwmon1/temp2_label", "Core 0\n");
    sys.write("hwmon/hwmon1/temp1_input", "53000\n");
    sys.write("hwmon/hwmon1/temp1_label", "Package id 0\n");
    sys.write("hwmon/hwmon1/temp1_max", "84000\n");
    sys.write("hwmon/hwmon1/temp1_crit", "100000\n");
    const auto sensor = findCpuTemperature(sys.root() / "hwmon", sys.root() / "thermal");
    REQUIRE(sensor);
    CHECK(sensor->input == sys.root() / "hwmon/hwmon1/temp1_input");
    CHECK(sensor->name == "coretemp Package id 0");
    CHECK(sensor->max == 84.0);
    CHECK(sensor->crit == 100.0);
    CHECK(readTemperature(sensor->input).value() == 53.0);
}

TEST_CASE("k10temp's Tctl is the CPU's temperature on AMD") {
    nicer::test::FakeCgroupTree sys;
    sys.write("hwmon/hwmon3/name", "k10temp\n");
    sys.write("hwmon/hwmon3/temp3_input", "40000\n");
    sys.write("hwmon/hwmon3/temp3_label", "Tccd1\n");
    sys.write("hwmon/hwmon3/temp1_input", "61250\n");
    sys.write("hwmon/hwmon3/temp1_label", "Tctl\n");
    const auto sensor = findCpuTemperature(sys.root() / "hwmon", sys.root() / "thermal");
    REQUIRE(sensor);
    CHECK(sensor->name == "k10temp Tctl");
    CHECK_FALSE(sensor->max);
    CHECK(readTemperature(sensor->input).value() == 61.25);
}

TEST_CASE("without a CPU's hwmon device, the package thermal zone is read, its critical trip as its limit") {
    nicer::test::FakeCgroupTree sys;
    sys.write("hwmon/hwmon0/name", "nvme\n");
    sys.write("hwmon/hwmon0/temp1_input", "38000\n");
    sys.write("thermal/thermal_zone0/type", "acpitz\n");
    sys.write("thermal/thermal_zone0/temp", "30000\n");
    sys.write("thermal/thermal_zone1/type", "x86_pkg_temp\n");
    sys.write("thermal/thermal_zone1/temp", "47000\n");
    sys.write("thermal/thermal_zone1/trip_point_0_type", "passive\n");
    sys.write("thermal/thermal_zone1/trip_point_0_temp", "90000\n");
    sys.write("thermal/thermal_zone1/trip_point_1_type", "critical\n");
    sys.write("thermal/thermal_zone1/trip_point_1_temp", "105000\n");
    const auto sensor = findCpuTemperature(sys.root() / "hwmon", sys.root() / "thermal");
    REQUIRE(sensor);
    CHECK(sensor->name == "thermal zone x86_pkg_temp");
    CHECK(sensor->crit == 105.0);
    CHECK(readTemperature(sensor->input).value() == 47.0);
}

TEST_CASE("a machine without sensors says what was looked for and where") {
    nicer::test::FakeCgroupTree sys;
    const auto sensor = findCpuTemperature(sys.root() / "hwmon", sys.root() / "thermal");
    REQUIRE_FALSE(sensor);
    CHECK_THAT(sensor.error().message, Catch::Contains("no CPU temperature sensor") &&
                                           Catch::Contains((sys.root() / "hwmon").string()) &&
                                           Catch::Contains("--temperature-sensor"));
    CHECK(findFans(sys.root() / "hwmon").empty());
}

TEST_CASE("a sensor named by hand is read first: a file that is not a sensor is refused") {
    nicer::test::FakeCgroupTree sys;
    sys.write("hwmon/hwmon2/name", "it8728\n");
    sys.write("hwmon/hwmon2/temp4_input", "45500\n");
    sys.write("hwmon/hwmon2/temp4_crit", "95000\n");
    const auto given = temperatureSensorAt(sys.root() / "hwmon/hwmon2/temp4_input");
    REQUIRE(given);
    CHECK(given->name == "it8728 temp4");
    CHECK(given->crit == 95.0);

    sys.write("zone/type", "cpu-thermal\n");
    sys.write("zone/temp", "52000\n");
    const auto zone = temperatureSensorAt(sys.root() / "zone");
    REQUIRE(zone);
    CHECK(zone->input == sys.root() / "zone/temp");

    sys.write("notes.txt", "hello\n");
    const auto wrong = temperatureSensorAt(sys.root() / "notes.txt");
    REQUIRE_FALSE(wrong);
    CHECK_THAT(wrong.error().message,
               Catch::Contains("is not a temperature sensor") && Catch::Contains("hello"));
    sys.write("hot", "900000\n"); // 900 °C: no sensor reads that
    CHECK_FALSE(temperatureSensorAt(sys.root() / "hot"));
    CHECK_FALSE(temperatureSensorAt(sys.root() / "absent"));
}

TEST_CASE("fans that report their speed are found with their labels") {
    nicer::test::FakeCgroupTree sys;
    sys.write("hwmon/hwmon4/name", "thinkpad\n");
    sys.write("hwmon/hwmon4/fan1_input", "2900\n");
    sys.write("hwmon/hwmon4/fan2_input", "not a number\n");
    sys.write("hwmon/hwmon5/name", "dell_smm\n");
    sys.write("hwmon/hwmon5/fan1_input", "0\n");
    sys.write("hwmon/hwmon5/fan1_label", "Processor Fan\n");
    const auto fans = findFans(sys.root() / "hwmon");
    REQUIRE(fans.size() == 2);
    CHECK(fans[0].name == "thinkpad fan1");
    CHECK(fans[1].name == "dell_smm fan1 (Processor Fan)");
    CHECK(readFan(fans[0].input).value() == 2900.0);
}
