#include "control/Controller.h"
#include "daemon/ControlLoop.h"
#include "fakes/FakeActuator.h"
#include "fakes/FakeMachine.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using nicer::api::Sample;
using nicer::control::Controller;
using nicer::control::ControllerParams;
using nicer::cpu::CpuSampler;
using nicer::daemon::ControlLoop;
using nicer::test::advancePeriod;
using nicer::test::FakeActuator;
using nicer::test::FakeBoundary;
using nicer::test::MachinePeriod;
using nicer::test::nsPerTick;
using nicer::test::StatFile;
using nicer::test::TwoCpuMachine;

namespace {

Sample tickOk(ControlLoop& loop, std::uint64_t timeUSec) {
    auto sample = loop.tick(timeUSec);
    INFO((sample ? std::string() : sample.error().message));
    REQUIRE(sample.ok());
    return *sample;
}

} // namespace

TEST_CASE("the loop splits busy time into the user's and the work's", "[ControlLoop]") {
    StatFile stat;
    stat.copyFixture("four-cpus-t0.txt");
    FakeActuator actuator;
    actuator.setWorkCpuNSec(5'000'000'000);
    ControlLoop loop(CpuSampler(stat.path()), ControllerParams{}, actuator, 10);
    REQUIRE(loop.prime().ok());

    // t0 -> t1: 400 ticks over four CPUs, 215 of them idle.
    stat.copyFixture("four-cpus-t1.txt");
    const double machineNSec = 400 * nsPerTick();
    const double idle = 215.0 / 400.0;
    const double busy = 1.0 - idle;

    SECTION("the work's share comes from its CPU time over the same span") {
        actuator.addWorkCpuNSec(static_cast<std::uint64_t>(std::llround(0.2 * machineNSec)));
        const auto s = tickOk(loop, 17);
        CHECK(s.timeUSec == 17);
        CHECK(s.idle == Approx(idle));
        CHECK(s.background == Approx(0.2));
        CHECK(s.foreground == Approx(busy - 0.2));
        CHECK(s.idle + s.foreground + s.background == Approx(1.0));
        CHECK(loop.cpuCount() == 4);
        REQUIRE(actuator.applied().size() == 1);
        CHECK(actuator.applied().back().cpuCount == 4);
    }
    SECTION("the work cannot have used more than the busy time") {
        actuator.addWorkCpuNSec(static_cast<std::uint64_t>(std::llround(3.0 * machineNSec)));
        const auto s = tickOk(loop, 17);
        CHECK(s.background == Approx(busy));
        CHECK(s.foreground == Approx(0.0).margin(1e-12));
        CHECK(s.idle + s.foreground + s.background == Approx(1.0));
    }
    SECTION("a work counter that went backwards (slice recreated) counts as no work") {
        actuator.setWorkCpuNSec(1'000'000'000);
        const auto s = tickOk(loop, 17);
        CHECK(s.background == 0.0);
        CHECK(s.foreground == Approx(busy));
        CHECK(s.idle + s.foreground + s.background == Approx(1.0));
    }
    SECTION("an idle work adds nothing") {
        const auto s = tickOk(loop, 17);
        CHECK(s.background == 0.0);
        CHECK(s.foreground == Approx(busy));
    }
}

TEST_CASE("the work's share is measured from the previous tick, not from the start", "[ControlLoop]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    ControlLoop loop(CpuSampler(stat.path()), ControllerParams{}, actuator, 10);
    REQUIRE(loop.prime().ok());

    const double machineNSec = 200 * nsPerTick();
    machine.advance(50);
    actuator.addWorkCpuNSec(static_cast<std::uint64_t>(std::llround(0.3 * machineNSec)));
    CHECK(tickOk(loop, 1).background == Approx(0.3));
    machine.advance(50);
    actuator.addWorkCpuNSec(static_cast<std::uint64_t>(std::llround(0.1 * machineNSec)));
    const auto second = tickOk(loop, 2);
    CHECK(second.background == Approx(0.1));
    CHECK(second.foreground == Approx(0.4));
}

TEST_CASE("the loop applies the controller's quota every tick", "[ControlLoop]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    ControllerParams params;
    params.overloadThreshold = 2;
    ControlLoop loop(CpuSampler(stat.path()), params, actuator, 100);
    REQUIRE(loop.prime().ok());

    // Idle, then the user takes the machine (the work must stop), then it is idle again.
    const std::vector<std::uint64_t> idleTicks{80, 75, 60, 40, 20, 0, 0, 0, 0, 0, 30, 90, 95, 100};
    Controller byHand(params);
    bool sawPositiveQuota = false;
    bool sawStop = false;
    for (std::size_t i = 0; i < idleTicks.size(); ++i) {
        INFO("tick " << i);
        machine.advance(idleTicks[i]);
        const auto s = tickOk(loop, i);
        CHECK(s.idle == Approx(static_cast<double>(idleTicks[i]) / 100.0));
        const auto& expected = byHand.step(s.idle);
        REQUIRE(actuator.applied().size() == i + 1);
        CHECK(actuator.applied().back().quota == expected.quota);
        CHECK(actuator.applied().back().cpuCount == 2);
        CHECK(s.quota == expected.quota);
        CHECK(s.multiplier == expected.multiplier);
        CHECK(s.overloadCount == static_cast<std::uint32_t>(expected.overloadCount));
        CHECK_FALSE(s.paused);
        sawPositiveQuota = sawPositiveQuota || expected.quota > 0.0;
        sawStop = sawStop || (i > 0 && actuator.applied()[i - 1].quota > 0.0 && expected.quota == 0.0);
    }
    // The trace must exercise both a running and a stopped work for the comparison to mean anything.
    CHECK(sawPositiveQuota);
    CHECK(sawStop);
    CHECK(loop.state().quota == byHand.state().quota);
}

TEST_CASE("pause() holds the work at quota 0 while the loop keeps sampling", "[ControlLoop]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    const ControllerParams params;
    ControlLoop loop(CpuSampler(stat.path()), params, actuator, 100);
    REQUIRE(loop.prime().ok());
    machine.advance(80);
    (void)tickOk(loop, 1);
    machine.advance(70);
    (void)tickOk(loop, 2);
    const auto running = loop.state();
    REQUIRE(running.quota > 0.0);

    REQUIRE(loop.pause().ok());
    CHECK(loop.paused());
    REQUIRE(actuator.applied().size() == 3);
    CHECK(actuator.applied().back().quota == 0.0);

    for (const std::uint64_t idle : {90, 0, 0, 0, 0, 0, 0}) {
        machine.advance(idle);
        const auto s = tickOk(loop, 3);
        CHECK(s.paused);
        CHECK(s.quota == 0.0);
        CHECK(s.idle == Approx(static_cast<double>(idle) / 100.0));
        CHECK(actuator.applied().back().quota == 0.0);
        // The controller does not see the paused periods: neither the idle nor the overloads.
        CHECK(loop.state().quota == running.quota);
        CHECK(loop.state().multiplier == running.multiplier);
        CHECK(loop.state().overloadCount == running.overloadCount);
    }

    loop.resume();
    CHECK_FALSE(loop.paused());
    CHECK(loop.state().quota == 0.0);
    CHECK(loop.state().multiplier == params.minMultiplier);
    CHECK(loop.state().overloadCount == 0);

    machine.advance(60);
    const auto s = tickOk(loop, 4);
    Controller fresh(params);
    fresh.step(s.idle);
    CHECK_FALSE(s.paused);
    CHECK(s.quota == fresh.state().quota);
    CHECK(actuator.applied().back().quota == fresh.state().quota);
    CHECK(s.quota > 0.0);
}

TEST_CASE("resume() without pause() keeps the controller's state", "[ControlLoop]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    ControlLoop loop(CpuSampler(stat.path()), ControllerParams{}, actuator, 100);
    REQUIRE(loop.prime().ok());
    machine.advance(80);
    (void)tickOk(loop, 1);
    const double quota = loop.state().quota;
    REQUIRE(quota > 0.0);
    loop.resume();
    CHECK(loop.state().quota == quota);
}

TEST_CASE("restart() starts the controller over with the work frozen, and keeps a pause", "[ControlLoop]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    const ControllerParams params{.multiplierDecay = 1.0}; // the thesis's decay: one step per period
    ControlLoop loop(CpuSampler(stat.path()), params, actuator, 100);
    REQUIRE(loop.prime().ok());
    machine.advance(0); // two overloads raise the multiplier to 4; one idle period takes it to 3
    (void)tickOk(loop, 1);
    machine.advance(0);
    (void)tickOk(loop, 1);
    machine.advance(90);
    (void)tickOk(loop, 2);
    REQUIRE(loop.state().quota > 0.0);
    REQUIRE(loop.state().multiplier > params.minMultiplier);

    REQUIRE(loop.restart().ok());
    CHECK_FALSE(loop.paused());
    CHECK(loop.state().quota == 0.0);
    CHECK(loop.state().multiplier == params.minMultiplier);
    CHECK(loop.state().overloadCount == 0);
    CHECK(actuator.applied().back().quota == 0.0);
    CHECK(actuator.frozen());

    machine.advance(60);
    const auto s = tickOk(loop, 3);
    Controller fresh(params);
    fresh.step(s.idle);
    CHECK(s.quota == fresh.state().quota);
    CHECK(s.quota > 0.0);

    SECTION("a paused loop stays paused") {
        REQUIRE(loop.pause().ok());
        REQUIRE(loop.restart().ok());
        CHECK(loop.paused());
        machine.advance(90);
        CHECK(tickOk(loop, 4).quota == 0.0);
        CHECK(actuator.applied().back().quota == 0.0);
    }
    SECTION("a failure to freeze the work is reported") {
        actuator.setApplyError("cgroup.freeze: Permission denied");
        const auto restarted = loop.restart();
        REQUIRE_FALSE(restarted.ok());
        CHECK_THAT(restarted.error().message, Catch::Contains("Permission denied"));
    }
}

TEST_CASE("the history keeps the newest samples up to its capacity", "[ControlLoop]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    ControlLoop loop(CpuSampler(stat.path()), ControllerParams{}, actuator, 3);
    REQUIRE(loop.prime().ok());
    CHECK(loop.history().empty());
    CHECK_FALSE(loop.last().has_value());

    for (std::uint64_t t = 1; t <= 5; ++t) {
        machine.advance(50);
        (void)tickOk(loop, t);
        CHECK(loop.history().size() == std::min<std::size_t>(t, 3));
    }
    REQUIRE(loop.history().size() == 3);
    CHECK(loop.history()[0].timeUSec == 3);
    CHECK(loop.history()[1].timeUSec == 4);
    CHECK(loop.history()[2].timeUSec == 5);
    REQUIRE(loop.last().has_value());
    CHECK(loop.last()->timeUSec == 5);
}

TEST_CASE("a sampler read error fails the tick and stops the work", "[ControlLoop]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    ControlLoop loop(CpuSampler(stat.path()), ControllerParams{}, actuator, 10);
    REQUIRE(loop.prime().ok());
    machine.advance(90);
    (void)tickOk(loop, 1);
    REQUIRE(actuator.applied().back().quota > 0.0);

    SECTION("the file is gone") {
        stat.remove();
    }
    SECTION("the file is not /proc/stat") {
        stat.write("cpu  1 2 x 4\n");
    }
    const auto failed = loop.tick(2);
    REQUIRE_FALSE(failed.ok());
    CHECK_THAT(failed.error().message, Catch::Contains(stat.path()));
    REQUIRE(actuator.applied().size() == 2);
    CHECK(actuator.applied().back().quota == 0.0);
    CHECK(actuator.applied().back().cpuCount == 2);
    CHECK(actuator.frozen());
}

TEST_CASE("a failed read of the work's CPU time is reported, with the quota still applied", "[ControlLoop]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    ControlLoop loop(CpuSampler(stat.path()), ControllerParams{}, actuator, 10);
    REQUIRE(loop.prime().ok());
    machine.advance(90);
    actuator.setWorkError("cpu.stat: no such file");
    const auto failed = loop.tick(1);
    REQUIRE_FALSE(failed.ok());
    CHECK_THAT(failed.error().message, Catch::Contains("work's CPU time") && Catch::Contains("cpu.stat"));
    // The quota comes from the idle time alone, so the controller still acts; the sample is kept.
    REQUIRE(actuator.applied().size() == 1);
    Controller byHand(ControllerParams{});
    CHECK(actuator.applied().back().quota == byHand.step(0.9).quota);
    REQUIRE(loop.last().has_value());
    CHECK(loop.last()->background == 0.0);
}

TEST_CASE("prime() fails when the work's CPU time cannot be read", "[ControlLoop]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    actuator.setWorkError("no CPU usage for cgroup /nicer.slice");
    ControlLoop loop(CpuSampler(stat.path()), ControllerParams{}, actuator, 10);
    const auto primed = loop.prime();
    REQUIRE_FALSE(primed.ok());
    CHECK_THAT(primed.error().message, Catch::Contains("/nicer.slice"));
}

TEST_CASE("a new actuator takes over at the last quota and counts the work's CPU time from its own count",
          "[ControlLoop]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator slice;
    ControlLoop loop(CpuSampler(stat.path()), ControllerParams{}, slice, 10);
    REQUIRE(loop.prime().ok());
    machine.advance(50);
    const auto first = tickOk(loop, 1);
    REQUIRE(first.quota > 0.0);

    FakeActuator duty;
    duty.setWorkCpuNSec(7'000'000'000); // another counter: the difference starts here, not from the slice's
    REQUIRE(loop.setActuator(duty).ok());
    REQUIRE(duty.applied().size() == 1);
    CHECK(duty.applied().back().quota == first.quota);
    CHECK(duty.applied().back().cpuCount == 2);

    const auto sliceCalls = slice.applied().size();
    machine.advance(50);
    duty.addWorkCpuNSec(static_cast<std::uint64_t>(std::llround(0.25 * 200 * nsPerTick())));
    const auto second = tickOk(loop, 2);
    CHECK(second.background == Approx(0.25));
    CHECK(slice.applied().size() == sliceCalls); // the old one is no longer asked
    CHECK(duty.applied().size() == 2);
}

namespace {

/// One period of the machine, then the loop's tick.
Sample tickPeriod(ControlLoop& loop, TwoCpuMachine& machine, FakeActuator& actuator, FakeBoundary& boundary,
                  const MachinePeriod& p, std::uint64_t timeUSec) {
    advancePeriod(machine, actuator, boundary, p);
    return tickOk(loop, timeUSec);
}

} // namespace

TEST_CASE("the loop splits your programs from other users and services at the user manager",
          "[ControlLoop][split]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    FakeBoundary boundary;
    ControlLoop loop(CpuSampler(stat.path()), ControllerParams{}, actuator, 10, nicer::control::Signal::Auto,
                     &boundary);
    REQUIRE(loop.prime().ok());

    const auto s = tickPeriod(loop, machine, actuator, boundary, {0.25, 0.25, 0.3}, 1);
    CHECK(s.background == Approx(0.25));
    CHECK(s.foreground == Approx(0.55));
    CHECK(s.outside == Approx(0.3));
    CHECK(s.idle == Approx(0.2));
    CHECK(s.outsideSignal);

    SECTION("without a readable user manager the outside is unknown and the whole machine is answered") {
        boundary.managerReadable = false;
        const auto blind = tickPeriod(loop, machine, actuator, boundary, {0.25, 0.25, 0.3}, 2);
        CHECK(blind.outside == -1.0);
        CHECK_FALSE(blind.outsideSignal);
        CHECK(blind.foreground == Approx(0.55));
    }
}

TEST_CASE("auto answers the outside only while the work's slice has cpu.idle", "[ControlLoop][split]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    FakeBoundary boundary;
    ControllerParams params;
    params.overloadThreshold = 2;
    ControlLoop loop(CpuSampler(stat.path()), params, actuator, 100, nicer::control::Signal::Auto, &boundary);
    REQUIRE(loop.prime().ok());

    SECTION("a sibling that takes every CPU costs the work no quota and no overload") {
        tickPeriod(loop, machine, actuator, boundary, {0.0, 0.02, 0.0}, 0);
        for (int i = 1; i < 10; ++i) {
            const auto s = tickPeriod(loop, machine, actuator, boundary, {0.01, 0.99, 0.0}, i);
            CHECK(s.outsideSignal);
            CHECK(s.quota == 1.0);
            CHECK(s.overloadCount == 0);
        }
        // The thesis's signal, fed the same periods, would have stopped the work.
        Controller thesis(params);
        thesis.step(0.98);
        bool stopped = false;
        for (int i = 1; i < 10; ++i) {
            stopped = stopped || thesis.step(0.0).quota == 0.0;
        }
        CHECK(stopped);
    }
    SECTION("in the root idle slice a hog outside the user manager costs the work no quota: the kernel puts "
            "it first") {
        boundary.rootIdle = true;
        for (int i = 0; i < 8; ++i) {
            const auto s = tickPeriod(loop, machine, actuator, boundary, {0.0, 0.0, 1.0}, i);
            CHECK(s.outsideSignal);
            CHECK(s.outside == Approx(1.0));
            CHECK(s.quota == 1.0);
            CHECK(s.overloadCount == 0);
        }
    }
    SECTION("a hog outside the user manager stops the work, as the thesis's controller would") {
        Controller byHand(params);
        bool sawStop = false;
        const std::vector<MachinePeriod> trace{{0.95, 0, 0}, {0.5, 0, 0.5}, {0.4, 0, 0.6}, {0.2, 0, 0.8},
                                               {0, 0, 1},    {0, 0, 1},     {0, 0, 1},     {0, 0, 1}};
        for (std::size_t i = 0; i < trace.size(); ++i) {
            INFO("period " << i);
            const auto s = tickPeriod(loop, machine, actuator, boundary, trace[i], i);
            const auto& expected = byHand.stepOutside(s.idle, trace[i].work, trace[i].outside);
            CHECK(s.outsideSignal);
            CHECK(s.quota == Approx(expected.quota).margin(1e-9));
            CHECK(actuator.applied().back().quota == s.quota);
            sawStop = sawStop || (i > 0 && s.quota == 0.0);
        }
        CHECK(sawStop);
    }
    SECTION("without cpu.idle the loop keeps the whole machine's idle, the thesis's signal") {
        boundary.cpuIdle = false;
        Controller byHand(params);
        for (int i = 0; i < 8; ++i) {
            const auto s = tickPeriod(loop, machine, actuator, boundary, {0.01, 0.99, 0.0}, i);
            CHECK_FALSE(s.outsideSignal);
            CHECK(s.outside == Approx(0.0).margin(1e-9));
            CHECK(s.quota == Approx(byHand.step(s.idle).quota).margin(1e-12));
        }
        CHECK(loop.state().quota == 0.0);
    }
    SECTION("cpu.idle written while nicerd runs takes effect at the next period") {
        boundary.cpuIdle = false;
        CHECK_FALSE(tickPeriod(loop, machine, actuator, boundary, {0.5, 0.5, 0.0}, 0).outsideSignal);
        boundary.cpuIdle = true;
        CHECK(tickPeriod(loop, machine, actuator, boundary, {0.5, 0.5, 0.0}, 1).outsideSignal);
    }
}

TEST_CASE("the machine setting keeps the thesis's signal even with cpu.idle", "[ControlLoop][split]") {
    StatFile stat;
    TwoCpuMachine machine(stat);
    FakeActuator actuator;
    FakeBoundary boundary;
    ControlLoop loop(CpuSampler(stat.path()), ControllerParams{}, actuator, 10,
                     nicer::control::Signal::Machine, &boundary);
    REQUIRE(loop.prime().ok());
    const auto s = tickPeriod(loop, machine, actuator, boundary, {0.2, 0.5, 0.1}, 1);
    CHECK_FALSE(s.outsideSignal);
    CHECK(s.outside == Approx(0.1)); // still measured and shown
    CHECK(s.quota == Approx(Controller(ControllerParams{}).step(0.2).quota));
}
