// The probe of the system-wide BOINC client, on a real sd-event loop: by the .wants link where there is no
// system bus, and through a real (private) system bus whose org.freedesktop.systemd1 answers, or hangs, with
// nicerd's loop going on meanwhile. The real system manager and boinc-client.service are the Debian guest's
// (tests/vm).

#include "EventLoop.h"
#include "ScopedEnv.h"
#include "boinc/SystemService.h"
#include "dbus/PrivateBus.h"
#include "fakes/FakeBinDir.h"
#include "libsystemd/Timer.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

using namespace nicer;
namespace fs = std::filesystem;

namespace {

/// A stand-in for systemd on a bus: org.freedesktop.systemd1 with boinc-client.service's unit object,
/// answering its properties, or (hung) never answering at all. Served by a thread while it lives.
class FakeSystemd {
public:
    FakeSystemd(libsystemd::BusPtr bus, bool hung)
        : m_bus(std::move(bus)) {
        char* path = nullptr;
        REQUIRE(sd_bus_path_encode("/org/freedesktop/systemd1/unit", "boinc-client.service", &path) >= 0);
        const std::string unitPath = path;
        std::free(path);
        sd_bus_slot* slot = nullptr;
        if (hung) {
            REQUIRE(sd_bus_add_object(m_bus.get(), &slot, unitPath.c_str(), &FakeSystemd::ignore, nullptr) >=
                    0);
        } else {
            REQUIRE(sd_bus_add_object_vtable(m_bus.get(), &slot, unitPath.c_str(),
                                             "org.freedesktop.systemd1.Unit", kUnit, nullptr) >= 0);
        }
        m_slot.reset(slot);
        REQUIRE(sd_bus_request_name(m_bus.get(), "org.freedesktop.systemd1", 0) >= 0);
        m_thread = std::thread([this] {
            while (!m_stop) {
                while (sd_bus_process(m_bus.get(), nullptr) > 0) {
                }
                sd_bus_wait(m_bus.get(), 20'000);
            }
        });
    }
    ~FakeSystemd() {
        m_stop = true;
        m_thread.join();
    }
    FakeSystemd(const FakeSystemd&) = delete;
    FakeSystemd& operator=(const FakeSystemd&) = delete;

private:
    /// Takes every call and answers none: a system manager that hangs.
    static int ignore(sd_bus_message*, void*, sd_bus_error*) { return 1; }
    static int property(sd_bus*, const char*, const char*, const char* name, sd_bus_message* reply, void*,
                        sd_bus_error*) {
        const std::string_view p = name;
        return sd_bus_message_append(reply, "s",
                                     p == "LoadState"     ? "loaded"
                                     : p == "ActiveState" ? "active"
                                                          : "disabled");
    }
    static constexpr sd_bus_vtable kUnit[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("LoadState", "s", &FakeSystemd::property, 0, 0),
        SD_BUS_PROPERTY("ActiveState", "s", &FakeSystemd::property, 0, 0),
        SD_BUS_PROPERTY("UnitFileState", "s", &FakeSystemd::property, 0, 0),
        SD_BUS_VTABLE_END,
    };

    libsystemd::BusPtr m_bus;
    libsystemd::BusSlotPtr m_slot;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

/// One look of @p probe, the loop run until it is answered; the advice.
std::string lookOnce(boinc::SystemServiceProbe& probe, sd_event* event) {
    std::optional<std::string> advice;
    probe.look([&](std::string found) { advice = std::move(found); });
    REQUIRE(test::runLoopUntil(event, [&] { return advice.has_value(); }));
    return *advice;
}

} // namespace

TEST_CASE("without a system bus, the probe reads the .wants link", "[SystemService]") {
    const test::FakeBinDir root;
    fs::create_directories(root.dir() / "etc/systemd/system/multi-user.target.wants");
    const test::ScopedEnv none("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=" + (root.dir() / "no-bus").string());
    const auto loop = test::newLoop();
    boinc::SystemServiceProbe probe(loop.get(), root.dir());
    CHECK(lookOnce(probe, loop.get()).empty());
    CHECK_FALSE(probe.usedSystemBus());
    fs::create_symlink("/lib/systemd/system/boinc-client.service",
                       root.dir() / "etc/systemd/system/multi-user.target.wants/boinc-client.service");
    CHECK_THAT(lookOnce(probe, loop.get()), Catch::Contains("is enabled"));
}

TEST_CASE("through the system bus, the probe finds a client started by hand", "[SystemService]") {
    const dbus::test::PrivateBus bus;
    const test::ScopedEnv address("DBUS_SYSTEM_BUS_ADDRESS", bus.address());
    const FakeSystemd systemd(bus.connect(), false);
    const test::FakeBinDir root;
    const auto loop = test::newLoop();
    boinc::SystemServiceProbe probe(loop.get(), root.dir());
    CHECK_THAT(lookOnce(probe, loop.get()), Catch::Contains("is running (started by hand, not enabled)"));
    CHECK(probe.usedSystemBus());
}

TEST_CASE("a system manager that never answers holds up nothing: the loop runs on, the link decides",
          "[SystemService]") {
    const dbus::test::PrivateBus bus;
    const test::ScopedEnv address("DBUS_SYSTEM_BUS_ADDRESS", bus.address());
    const FakeSystemd systemd(bus.connect(), true);
    const test::FakeBinDir root;
    fs::create_directories(root.dir() / "etc/systemd/system/multi-user.target.wants");
    fs::create_symlink("/lib/systemd/system/boinc-client.service",
                       root.dir() / "etc/systemd/system/multi-user.target.wants/boinc-client.service");
    const auto loop = test::newLoop();
    boinc::SystemServiceProbe probe(loop.get(), root.dir());
    std::optional<std::string> advice;
    probe.look([&](std::string found) { advice = std::move(found); });
    // The look is under way, not answered inside look(): a blocking probe would have waited here.
    CHECK_FALSE(advice.has_value());
    // Meanwhile the loop serves its other sources: a timer of the next period fires while the look waits.
    bool ticked = false;
    auto tick = libsystemd::Timer::create(loop.get(), [&] { ticked = true; });
    REQUIRE(tick.ok());
    tick->armIn(std::chrono::milliseconds(10));
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return ticked; }));
    CHECK_FALSE(advice.has_value());
    // A second look while the first waits is dropped, not stacked.
    bool second = false;
    probe.look([&](std::string) { second = true; });
    // Given up after its timeout: the .wants link answers.
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return advice.has_value(); }));
    CHECK_THAT(*advice, Catch::Contains("is enabled"));
    CHECK_FALSE(probe.usedSystemBus());
    CHECK_FALSE(second);
}
