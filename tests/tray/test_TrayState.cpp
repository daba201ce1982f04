#include "tray/StateIcon.h"
#include "tray/TrayState.h"

#include <catch2/catch.hpp>

#include <chrono>

using nicer::api::Sample;
using nicer::tray::DaemonView;
using nicer::tray::TrayState;
using nicer::tray::trayStateFor;

namespace {

DaemonView connectedWith(const Sample& s) {
    DaemonView v;
    v.connected = true;
    v.sample = s;
    return v;
}

Sample running() {
    Sample s;
    s.quota = 0.95;
    s.multiplier = 1.0;
    return s;
}

} // namespace

TEST_CASE("the tray state says whether the work runs, gives way, is paused or needs attention", "[tray]") {
    SECTION("not connected: connecting while nicerd starts, an error otherwise") {
        DaemonView v;
        CHECK(trayStateFor(v, true) == TrayState::Connecting);
        CHECK(trayStateFor(v, false) == TrayState::Error);
    }
    SECTION("connected but no sample yet") {
        DaemonView v;
        v.connected = true;
        CHECK(trayStateFor(v, false) == TrayState::Connecting);
    }
    SECTION("the work has its full share") {
        CHECK(trayStateFor(connectedWith(running()), false) == TrayState::Running);
    }
    SECTION("a widened band, an overload or a stopped work all mean it gives way") {
        auto s = running();
        s.multiplier = 2.0;
        CHECK(trayStateFor(connectedWith(s), false) == TrayState::Throttled);
        s = running();
        s.overloadCount = 1;
        CHECK(trayStateFor(connectedWith(s), false) == TrayState::Throttled);
        s = running();
        s.quota = 0.0;
        CHECK(trayStateFor(connectedWith(s), false) == TrayState::Throttled);
    }
    SECTION("the band counts as widened only above the configured minimum") {
        auto s = running();
        s.multiplier = 2.0;
        auto v = connectedWith(s);
        v.params.minMultiplier = 2.0;
        CHECK(trayStateFor(v, false) == TrayState::Running);
    }
    SECTION("paused wins over throttled; an error wins over everything") {
        auto s = running();
        s.quota = 0;
        s.paused = true;
        auto v = connectedWith(s);
        CHECK(trayStateFor(v, false) == TrayState::Paused);
        v.lastError = "cannot apply the quota";
        CHECK(trayStateFor(v, false) == TrayState::Error);
    }
}

TEST_CASE("each state has its own icon, colour and name", "[tray]") {
    const TrayState states[] = {TrayState::Connecting, TrayState::Running, TrayState::Throttled,
                                TrayState::Paused,     TrayState::Error,   TrayState::Held,
                                TrayState::RulePaused};
    for (auto a : states) {
        const QIcon icon = nicer::tray::stateIcon(a);
        REQUIRE_FALSE(icon.isNull());
        CHECK(icon.availableSizes().contains(QSize(22, 22)));
        CHECK_FALSE(nicer::tray::trayStateName(a).isEmpty());
        for (auto b : states) {
            if (a != b) {
                CHECK(nicer::tray::stateColor(a) != nicer::tray::stateColor(b));
                CHECK(icon.pixmap(32).toImage() != nicer::tray::stateIcon(b).pixmap(32).toImage());
            }
        }
    }
}

TEST_CASE("held back by the outside signal, the state names other users and services", "[tray][outside]") {
    const auto mine = nicer::tray::trayStateName(TrayState::Throttled);
    const auto others = nicer::tray::trayStateName(TrayState::Throttled, true);
    CHECK(mine.contains("your programs"));
    CHECK(others.contains("other users and services"));
    CHECK(nicer::tray::trayStateName(TrayState::Running, true) ==
          nicer::tray::trayStateName(TrayState::Running));
}

TEST_CASE("a rule of the volunteer's that holds the work is a state of its own, and says why",
          "[tray][rules]") {
    using nicer::tray::trayStatusText;
    SECTION("a cap under the controller's quota is held, a cap of nothing is paused by a rule") {
        auto s = running();
        s.quota = 0.4;
        s.heldBy = "temperature";
        auto v = connectedWith(s);
        v.holdReason = "held to 40%: CPU 82 \u00b0C, target 80 \u00b0C";
        CHECK(trayStateFor(v, false) == TrayState::Held);
        CHECK(trayStatusText(TrayState::Held, v) == "Held to 40%: CPU 82 \u00b0C, target 80 \u00b0C");
        s.quota = 0.0;
        s.heldBy = "battery";
        v = connectedWith(s);
        v.holdReason = "paused: on battery, 54%";
        CHECK(trayStateFor(v, false) == TrayState::RulePaused);
        CHECK(trayStatusText(TrayState::RulePaused, v) == "Paused: on battery, 54%");
    }
    SECTION("the rule holds rather than the controller: a widened band under a rule's cap is still held") {
        auto s = running();
        s.multiplier = 4.0;
        s.quota = 0.2;
        s.heldBy = "fan";
        CHECK(trayStateFor(connectedWith(s), false) == TrayState::Held);
        s.heldBy.clear();
        CHECK(trayStateFor(connectedWith(s), false) == TrayState::Throttled);
    }
    SECTION("the volunteer's own pause and an error come before any rule") {
        auto s = running();
        s.quota = 0.0;
        s.heldBy = "game";
        auto v = connectedWith(s);
        v.paused = true;
        v.holdReason = "paused: a game is running";
        CHECK(trayStateFor(v, false) == TrayState::Paused);
        CHECK(trayStatusText(TrayState::Paused, v) == nicer::tray::trayStateName(TrayState::Paused));
        v.paused = false;
        v.lastError = "cannot apply the quota";
        CHECK(trayStateFor(v, false) == TrayState::Error);
    }
    SECTION("without nicerd's words yet, the state's own name") {
        auto s = running();
        s.quota = 0.0;
        s.heldBy = "program";
        const auto v = connectedWith(s);
        CHECK(trayStatusText(trayStateFor(v, false), v) == "Paused by your rules");
        CHECK(trayStatusText(TrayState::Running, connectedWith(running())) == "Running on spare CPU");
    }
}

TEST_CASE("a snooze says when it ends and how long that is", "[tray]") {
    using nicer::tray::trayStatusText;
    auto v = connectedWith(running());
    v.paused = true;
    const auto now = std::chrono::system_clock::now();
    const auto end = now + std::chrono::minutes(52);
    v.pausedUntilUSec = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(end.time_since_epoch()).count());
    const QString text = trayStatusText(TrayState::Paused, v, now);
    CHECK(text.startsWith("Paused until "));
    CHECK(text.endsWith("(52 min left)"));
    // Until the volunteer resumes it: the state's name alone.
    v.pausedUntilUSec = 0;
    CHECK(trayStatusText(TrayState::Paused, v, now) == "Paused");
}
