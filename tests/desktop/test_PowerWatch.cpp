// The power watch against the real upowerd (and power-profiles-daemon) on a private system bus, over
// umockdev's emulated mains and battery (tests/harness/fake-battery.py): values read when UPower signals
// them, never polled; the power_supply directory where UPower or the bus is missing or leaves, UPower again
// when it is back. Skipped where upower, umockdev or their Python bindings are not installed.

#include "EventLoop.h"
#include "ScopedEnv.h"
#include "Skip.h"
#include "TempDir.h"
#include "desktop/FakeLaptop.h"
#include "desktop/PowerWatch.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

using namespace nicer;
namespace fs = std::filesystem;

namespace {

/// A watch on @p event and the count of its changed() calls.
struct Watched {
    std::unique_ptr<desktop::PowerWatch> watch;
    int changes = 0;

    Watched(sd_event* event, desktop::PowerWatch::Options options) {
        auto made = desktop::PowerWatch::create(event, std::move(options), [this] { ++changes; });
        REQUIRE(made.ok());
        watch = std::move(*made);
    }
    const desktop::PowerState& state() const { return watch->state(); }
};

/// A power_supply tree of a laptop on mains with its battery at 64 %.
void laptopTree(const fs::path& dir) {
    fs::create_directories(dir / "AC");
    std::ofstream(dir / "AC" / "type") << "Mains\n";
    std::ofstream(dir / "AC" / "online") << "1\n";
    fs::create_directories(dir / "BAT0");
    std::ofstream(dir / "BAT0" / "type") << "Battery\n";
    std::ofstream(dir / "BAT0" / "status") << "Charging\n";
    std::ofstream(dir / "BAT0" / "capacity") << "64\n";
}

} // namespace

TEST_CASE("UPower's values, and their changes when UPower signals them, without a poll", "[PowerWatch]") {
    const test::PrivateSystemBus bus;
    test::FakeLaptop laptop(bus.address());
    if (!laptop.missing().empty()) {
        NICER_SKIP("the real upowerd on an emulated battery needs " << laptop.missing());
    }
    const auto loop = test::newLoop();
    Watched w(loop.get(), {bus.address(), laptop.powerSupplyDir()});
    // create() asked and returned: the answer comes on the loop; meanwhile the power_supply directory's
    // values.
    CHECK(w.state().source == laptop.powerSupplyDir().string());
    CHECK_THAT(w.watch->note(), Catch::StartsWith("waiting for UPower's answer: reading "));
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.state().source == "UPower"; }));
    CHECK_FALSE(w.state().onBattery);
    CHECK(w.state().percent == Approx(80.0));
    CHECK_FALSE(w.state().powerSaver);
    CHECK(w.watch->note().empty());

    w.changes = 0;
    laptop.command("unplug");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.state().onBattery; }));
    CHECK(w.changes > 0);
    CHECK(w.state().source == "UPower");
    laptop.command("plug");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !w.state().onBattery; }));
    w.changes = 0;
    laptop.command("charge 40");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.state().percent == Approx(40.0); }));
    CHECK(w.changes > 0);
}

TEST_CASE("when upowerd leaves the bus, the power_supply directory, and when it is back, UPower again",
          "[PowerWatch]") {
    const test::PrivateSystemBus bus;
    test::FakeLaptop laptop(bus.address());
    if (!laptop.missing().empty()) {
        NICER_SKIP("the real upowerd on an emulated battery needs " << laptop.missing());
    }
    const auto loop = test::newLoop();
    const std::string dir = laptop.powerSupplyDir().string();
    Watched w(loop.get(), {bus.address(), laptop.powerSupplyDir()});
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.state().source == "UPower"; }));
    laptop.command("unplug");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.state().onBattery; }));

    w.changes = 0;
    laptop.command("stop-upower");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.state().source == dir; }));
    CHECK(w.changes > 0);
    CHECK(w.watch->note() == "UPower left the system bus: reading " + dir);
    // The same machine, read from its files: on battery, the battery's capacity.
    CHECK(w.state().onBattery);
    CHECK(w.state().percent == Approx(80.0));
    // Without UPower, the files are read once a period.
    laptop.command("plug");
    w.watch->poll();
    CHECK_FALSE(w.state().onBattery);

    laptop.command("start-upower");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.state().source == "UPower"; }));
    CHECK(w.watch->note().empty());
    CHECK_FALSE(w.state().onBattery);
}

TEST_CASE("UPower that is not on the bus yet: the power_supply directory, then UPower as soon as it comes",
          "[PowerWatch]") {
    const test::PrivateSystemBus bus;
    if (const test::FakeLaptop check(bus.address(), test::FakeLaptop::Profiles::None, true);
        !check.missing().empty()) {
        NICER_SKIP("the real upowerd on an emulated battery needs " << check.missing());
    }
    const test::TempDir tree;
    laptopTree(tree.path);
    const auto loop = test::newLoop();
    Watched w(loop.get(), {bus.address(), tree.path});
    const std::string expected = "UPower is not on the system bus: reading " + tree.path.string();
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.watch->note() == expected; }));
    CHECK(w.state().source == tree.path.string());
    CHECK(w.state().percent == 64.0);
    const test::FakeLaptop laptop(bus.address());
    REQUIRE(laptop.missing().empty());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.state().source == "UPower"; }));
    CHECK(w.state().percent == Approx(80.0));
}

TEST_CASE("no system bus at all: the power_supply directory, with a note, and no error", "[PowerWatch]") {
    const test::TempDir tree;
    laptopTree(tree.path / "power_supply");
    const std::string noBus = "unix:path=" + (tree.path / "no-bus").string();
    const auto loop = test::newLoop();
    SECTION("an address given") {
        Watched w(loop.get(), {noBus, tree.path / "power_supply"});
        CHECK(w.state() == desktop::PowerState{false, 64.0, false, (tree.path / "power_supply").string()});
        CHECK_THAT(w.watch->note(),
                   Catch::StartsWith("no system bus (") &&
                       Catch::EndsWith("): reading " + (tree.path / "power_supply").string()));
        w.watch->poll();
        CHECK(w.state().percent == 64.0);
        CHECK(w.changes == 0);
    }
    SECTION(
        "the system bus's own address (DBUS_SYSTEM_BUS_ADDRESS), and a directory without power supplies") {
        const test::ScopedEnv address("DBUS_SYSTEM_BUS_ADDRESS", noBus);
        Watched w(loop.get(), {"", tree.path});
        CHECK(w.state() == desktop::PowerState{});
        CHECK_THAT(w.watch->note(),
                   Catch::StartsWith("no system bus (") &&
                       Catch::Contains("; nothing like a power supply in " + tree.path.string()));
    }
}

TEST_CASE("a system bus that goes away: the power_supply directory, and the bus again once it is back",
          "[PowerWatch]") {
    const test::TempDir tree;
    laptopTree(tree.path);
    auto bus = std::make_unique<test::PrivateSystemBus>();
    const auto loop = test::newLoop();
    Watched w(loop.get(), {bus->address(), tree.path});
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.watch->note().starts_with("UPower is not on"); }));
    bus->stop();
    REQUIRE(
        test::runLoopUntil(loop.get(), [&] { return w.watch->note().starts_with("the system bus closed"); }));
    CHECK(w.watch->note() == "the system bus closed: reading " + tree.path.string());
    CHECK(w.state().source == tree.path.string());
    // Once a period it connects again: the bus is gone, and the note says so.
    w.watch->poll();
    CHECK_THAT(w.watch->note(), Catch::StartsWith("no system bus ("));
    CHECK(w.state().percent == 64.0);
}

TEST_CASE("power-profiles-daemon's power-saver profile, read when it changes", "[PowerWatch]") {
    const test::PrivateSystemBus bus;
    // Debian 12's power-profiles-daemon (real), and one of a later version under its later name alone (the
    // harness's stand-in, since Debian 12 has no such version).
    const auto profiles = GENERATE(test::FakeLaptop::Profiles::Real, test::FakeLaptop::Profiles::LaterName);
    CAPTURE(profiles == test::FakeLaptop::Profiles::Real ? "net.hadess.PowerProfiles"
                                                         : "org.freedesktop.UPower.PowerProfiles");
    test::FakeLaptop laptop(bus.address(), profiles);
    if (!laptop.missing().empty()) {
        NICER_SKIP("the real power-profiles-daemon beside upowerd needs " << laptop.missing());
    }
    const auto loop = test::newLoop();
    Watched w(loop.get(), {bus.address(), laptop.powerSupplyDir()});
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.state().source == "UPower"; }));
    CHECK_FALSE(w.state().powerSaver);
    laptop.command("profile power-saver");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.state().powerSaver; }));
    laptop.command("profile balanced");
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !w.state().powerSaver; }));
}
