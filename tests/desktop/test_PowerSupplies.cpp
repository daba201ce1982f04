// The power_supply reader on fake trees of /sys/class/power_supply: what it makes of mains, batteries, USB
// supplies, a peripheral's battery, a directory with something else in it, and none at all.

#include "TempDir.h"
#include "desktop/PowerSupplies.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>

using namespace nicer;
namespace fs = std::filesystem;

namespace {

/// A supply @p name in @p dir with the attributes @p attributes (name, value), as the kernel writes them.
void supply(const fs::path& dir, const std::string& name,
            std::initializer_list<std::pair<const char*, const char*>> attributes) {
    fs::create_directories(dir / name);
    for (const auto& [attribute, value] : attributes) {
        std::ofstream(dir / name / attribute) << value << '\n';
    }
}

desktop::PowerState read(const fs::path& dir, std::string& note) {
    return desktop::readPowerSupplies(dir, note);
}

} // namespace

TEST_CASE("mains online and a charging battery: not on battery, the battery's capacity", "[PowerSupplies]") {
    const test::TempDir tree;
    supply(tree.path, "AC", {{"type", "Mains"}, {"online", "1"}});
    supply(tree.path, "BAT0",
           {{"type", "Battery"}, {"present", "1"}, {"status", "Charging"}, {"capacity", "80"}});
    std::string note = "stale";
    const auto state = read(tree.path, note);
    CHECK_FALSE(state.onBattery);
    CHECK(state.percent == 80.0);
    CHECK_FALSE(state.powerSaver);
    CHECK(state.source == tree.path.string());
    CHECK(note.empty());
}

TEST_CASE("mains offline and a discharging battery: on battery", "[PowerSupplies]") {
    const test::TempDir tree;
    supply(tree.path, "AC", {{"type", "Mains"}, {"online", "0"}});
    supply(tree.path, "BAT0", {{"type", "Battery"}, {"status", "Discharging"}, {"capacity", "37"}});
    std::string note;
    const auto state = read(tree.path, note);
    CHECK(state.onBattery);
    CHECK(state.percent == 37.0);
    CHECK(note.empty());
}

TEST_CASE("a battery that discharges while mains is online (a heavy load): not on battery",
          "[PowerSupplies]") {
    const test::TempDir tree;
    supply(tree.path, "ACAD", {{"type", "Mains"}, {"online", "1"}});
    supply(tree.path, "BAT1", {{"type", "Battery"}, {"status", "Discharging"}, {"capacity", "90"}});
    std::string note;
    CHECK_FALSE(read(tree.path, note).onBattery);
}

TEST_CASE("a USB-C supply online counts as external power, and offline the battery runs the machine",
          "[PowerSupplies]") {
    const test::TempDir tree;
    supply(tree.path, "ucsi-source-psy-USBC000:001", {{"type", "USB"}, {"online", "1"}, {"scope", "System"}});
    supply(tree.path, "BAT0", {{"type", "Battery"}, {"status", "Discharging"}, {"capacity", "55"}});
    std::string note;
    CHECK_FALSE(read(tree.path, note).onBattery);
    supply(tree.path, "ucsi-source-psy-USBC000:001", {{"online", "0"}});
    CHECK(read(tree.path, note).onBattery);
}

TEST_CASE("a battery without capacity gives its energy's share, and two batteries are weighted by their size",
          "[PowerSupplies]") {
    const test::TempDir tree;
    supply(tree.path, "BAT0",
           {{"type", "Battery"},
            {"status", "Discharging"},
            {"energy_now", "30000000"},
            {"energy_full", "60000000"}});
    std::string note;
    CHECK(read(tree.path, note).percent == Approx(50.0));
    // No mains at all (a battery-only tablet) while discharging: on battery.
    CHECK(read(tree.path, note).onBattery);
    supply(
        tree.path, "BAT1",
        {{"type", "Battery"}, {"status", "Discharging"}, {"capacity", "100"}, {"energy_full", "20000000"}});
    CHECK(read(tree.path, note).percent == Approx((50.0 * 60 + 100.0 * 20) / 80));
}

TEST_CASE("a mouse's battery and an empty battery bay say nothing of the machine", "[PowerSupplies]") {
    const test::TempDir tree;
    supply(tree.path, "AC", {{"type", "Mains"}, {"online", "1"}});
    supply(tree.path, "hidpp_battery_0",
           {{"type", "Battery"}, {"scope", "Device"}, {"status", "Discharging"}, {"capacity", "10"}});
    supply(tree.path, "BAT1", {{"type", "Battery"}, {"present", "0"}});
    std::string note;
    const auto state = read(tree.path, note);
    CHECK_FALSE(state.onBattery);
    CHECK(state.percent == -1.0);
    CHECK(state.source == tree.path.string()); // mains is known: a desktop on mains
    CHECK(note.empty());
}

TEST_CASE("a directory with nothing like a power supply is a note, not a state", "[PowerSupplies]") {
    const test::TempDir tree;
    fs::create_directories(tree.path / "junk");
    std::ofstream(tree.path / "junk" / "uevent") << "DEVTYPE=thing\n";
    std::ofstream(tree.path / "README") << "not a supply\n";
    std::string note;
    const auto state = read(tree.path, note);
    CHECK(state == desktop::PowerState{});
    CHECK(state.source.empty());
    CHECK_THAT(note, Catch::Contains("nothing like a power supply in " + tree.path.string()));
}

TEST_CASE("a missing directory, or a file in its place, is a note", "[PowerSupplies]") {
    const test::TempDir tree;
    std::string note;
    CHECK(read(tree.path / "absent", note) == desktop::PowerState{});
    CHECK_THAT(note, Catch::StartsWith("no " + (tree.path / "absent").string()));
    std::ofstream(tree.path / "file") << "1\n";
    CHECK(read(tree.path / "file", note) == desktop::PowerState{});
    CHECK_THAT(note, Catch::Contains("is not a directory"));
}
