// GameWatch against the real gamemoded (Debian's gamemode-daemon) on a private session bus, with games
// registered by the real gamemoderun (Debian's gamemode).
#include "EventLoop.h"
#include "Poll.h"
#include "PrivateBusConfig.h"
#include "Skip.h"
#include "desktop/FakeLaptop.h"
#include "desktop/GameWatch.h"
#include "libsystemd/Bus.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

using namespace nicer;
using namespace std::chrono_literals;

namespace {

constexpr const char* kGamemoded = "/usr/bin/gamemoded";
constexpr const char* kGamemodeRun = "/usr/games/gamemoderun";

/// A private session bus on which GameMode is activatable (a .service file naming gamemoded), as on a
/// desktop, so that a watch that started it would be seen.
class SessionBus {
public:
    SessionBus() {
        char dir[] = "/tmp/nicer-gamemode-test-XXXXXX";
        REQUIRE(::mkdtemp(dir) != nullptr);
        m_dir = dir;
        std::filesystem::create_directories(m_dir / "services");
        std::ofstream(m_dir / "services" / "com.feralinteractive.GameMode.service")
            << "[D-BUS Service]\nName=com.feralinteractive.GameMode\nExec=" << kGamemoded << "\n";
        std::string config = test::privateBusConfig(m_dir.string());
        config.insert(config.find("</busconfig>"),
                      "  <servicedir>" + (m_dir / "services").string() + "</servicedir>\n");
        std::ofstream(m_dir / "bus.conf") << config;
        m_daemon.start({"/usr/bin/dbus-daemon", "--config-file=" + (m_dir / "bus.conf").string(),
                        "--print-address", "--nofork"},
                       m_dir / "dbus-daemon.log");
        m_address = test::readLine(m_daemon.out());
        REQUIRE_FALSE(m_address.empty());
    }
    ~SessionBus() {
        m_daemon.stop(0ms);
        std::error_code ignored;
        std::filesystem::remove_all(m_dir, ignored);
    }
    SessionBus(const SessionBus&) = delete;
    SessionBus& operator=(const SessionBus&) = delete;

    const std::string& address() const { return m_address; }
    /// Ends the bus daemon: every connection to it closes.
    void stop() { m_daemon.stop(0ms); }
    /// A client on @p event's loop.
    libsystemd::BusPtr connect(sd_event* event) const {
        sd_bus* bus = nullptr;
        REQUIRE(sd_bus_new(&bus) >= 0);
        libsystemd::BusPtr owned(bus);
        REQUIRE(sd_bus_set_address(bus, m_address.c_str()) >= 0);
        REQUIRE(sd_bus_set_bus_client(bus, 1) >= 0);
        REQUIRE(sd_bus_start(bus) >= 0);
        REQUIRE(sd_bus_attach_event(bus, event, 0) >= 0);
        return owned;
    }
    /// A program with DBUS_SESSION_BUS_ADDRESS set to this bus; its output to @p log.
    void run(test::Child& child, const std::vector<std::string>& argv) const {
        ::setenv("DBUS_SESSION_BUS_ADDRESS", m_address.c_str(), 1);
        child.start(argv, m_dir / "child.log");
        ::unsetenv("DBUS_SESSION_BUS_ADDRESS");
    }
    /// gamemoded on this bus in @p child, once it owns its name (asked on @p bus).
    void startGamemoded(test::Child& child, sd_bus* bus) const {
        run(child, {kGamemoded});
        REQUIRE(test::pollUntil([&] { return gameModeOwned(bus); }, 10s, 20ms));
    }
    /// Whether a process owns GameMode's name now (asked synchronously: the test's own question).
    bool gameModeOwned(sd_bus* bus) const {
        int has = 0;
        sd_bus_message* reply = nullptr;
        if (sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameHasOwner", nullptr, &reply, "s", desktop::kGameModeName) < 0) {
            return false;
        }
        libsystemd::BusMessagePtr owned(reply);
        return sd_bus_message_read(reply, "b", &has) >= 0 && has != 0;
    }

private:
    std::filesystem::path m_dir;
    test::Child m_daemon;
    std::string m_address;
};

} // namespace

TEST_CASE("without gamemoded the watch sees no game, says so, does not start it, and sees it come",
          "[desktop][GameWatch]") {
    if (::access(kGamemoded, X_OK) != 0) {
        NICER_SKIP("gamemoded is not installed: install gamemode-daemon (packaging/dev.sh does)");
    }
    SessionBus session;
    auto loop = test::newLoop();
    auto bus = session.connect(loop.get());
    int changes = 0;
    auto watch = desktop::GameWatch::create(bus.get(), [&] { ++changes; });
    REQUIRE(watch);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return changes > 0; }));
    CHECK_FALSE((*watch)->available());
    CHECK((*watch)->clientCount() == 0);
    CHECK_THAT((*watch)->note(), Catch::Contains("GameMode is not running"));
    (void)test::runLoopUntil(
        loop.get(), [] { return false; }, 500ms);
    CHECK_FALSE(session.gameModeOwned(bus.get())); // activatable, but the watch only listened

    test::Child gamemoded;
    session.run(gamemoded, {kGamemoded});
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return (*watch)->available(); }));
    CHECK((*watch)->clientCount() == 0);
    CHECK((*watch)->note().empty());
    gamemoded.stop(0ms);
}

TEST_CASE("a game run with gamemoderun is counted while it runs, and gamemoded leaving is said",
          "[desktop][GameWatch]") {
    if (::access(kGamemoded, X_OK) != 0 || ::access(kGamemodeRun, X_OK) != 0) {
        NICER_SKIP("gamemoded or gamemoderun is not installed: install gamemode (packaging/dev.sh does)");
    }
    SessionBus session;
    test::Child gamemoded;
    auto loop = test::newLoop();
    auto bus = session.connect(loop.get());
    session.startGamemoded(gamemoded, bus.get());
    int changes = 0;
    auto watch = desktop::GameWatch::create(bus.get(), [&] { ++changes; });
    REQUIRE(watch);
    auto& w = **watch;
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.available(); }));
    CHECK(w.clientCount() == 0);
    CHECK(w.note().empty());

    test::Child first;
    test::Child second;
    session.run(first, {kGamemodeRun, "sleep", "2"});
    session.run(second, {kGamemodeRun, "sleep", "3"});
    const int before = changes;
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.clientCount() == 2; }));
    CHECK(changes > before);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.clientCount() == 1; }));
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.clientCount() == 0; }));
    CHECK(w.available());

    const int running = changes;
    gamemoded.stop(0ms);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !w.available(); }));
    CHECK_THAT(w.note(),
               Catch::Contains("GameMode left the session bus") && Catch::Contains("--exclusive-program"));
    CHECK(changes > running);
}

TEST_CASE("a session bus that closes under the watch is said, and no game is counted",
          "[desktop][GameWatch]") {
    if (::access(kGamemoded, X_OK) != 0 || ::access(kGamemodeRun, X_OK) != 0) {
        NICER_SKIP("gamemoded or gamemoderun is not installed: install gamemode (packaging/dev.sh does)");
    }
    SessionBus session;
    test::Child gamemoded;
    auto loop = test::newLoop();
    auto bus = session.connect(loop.get());
    session.startGamemoded(gamemoded, bus.get());
    auto watch = desktop::GameWatch::create(bus.get(), [] {});
    REQUIRE(watch);
    auto& w = **watch;
    test::Child game;
    session.run(game, {kGamemodeRun, "sleep", "5"});
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return w.clientCount() == 1; }));

    session.stop();
    // A Get under way fails first ("Connection terminated"); sd-bus's Disconnected comes after it.
    REQUIRE(test::runLoopUntil(loop.get(),
                               [&] { return w.note().find("session bus closed") != std::string::npos; }));
    CHECK_FALSE(w.available());
    CHECK(w.clientCount() == 0);
    CHECK_THAT(w.note(), Catch::Contains("--exclusive-program"));
    game.stop(0ms);
    gamemoded.stop(0ms);
}
