#include "EventLoop.h"
#include "actuator/DutyCycleActuator.h"
#include "fakes/ChildProcess.h"
#include "fakes/FakeCgroupTree.h"
#include "libsystemd/Timer.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace nicer;
using namespace std::chrono_literals;

namespace {

using Child = test::ChildProcess;

// A fake v2 tree whose cgroup /work.slice holds @p pid, without cgroup.freeze (as on a v1 tree).
kernel::CgroupLayout layoutWith(const test::FakeCgroupTree& tree, pid_t pid) {
    tree.write("unified/work.slice/cgroup.procs", std::to_string(pid) + "\n");
    auto layout = kernel::CgroupLayout::parse(tree.mountLine("unified", "cgroup2", "rw,nsdelegate"));
    REQUIRE(layout);
    return *layout;
}

// Calls @p sample every @p every on the loop for @p span; how many times it ran.
int sampleEvery(sd_event* event, std::chrono::milliseconds every, std::chrono::milliseconds span,
                const std::function<void()>& sample) {
    int samples = 0;
    libsystemd::Timer sampler;
    auto created = libsystemd::Timer::create(event, [&] {
        ++samples;
        sample();
        sampler.armIn(every);
    });
    REQUIRE(created);
    sampler = std::move(*created);
    sampler.armIn(0ms);
    const auto end = std::chrono::steady_clock::now() + span;
    test::runLoopUntil(
        event, [&] { return std::chrono::steady_clock::now() >= end; }, span + 1s);
    return samples;
}

// Samples the child's state every 5 ms on the loop for @p span; the share of samples in which it was stopped.
double stoppedShare(sd_event* event, const Child& child, std::chrono::milliseconds span) {
    int stopped = 0;
    const int samples = sampleEvery(event, 5ms, span, [&] { stopped += child.state() == 'T'; });
    REQUIRE(samples > 20);
    return static_cast<double>(stopped) / samples;
}

auto signalCycle(sd_event* event, kernel::CgroupLayout layout) {
    return actuator::DutyCycleActuator::create(event, std::move(layout), "/work.slice",
                                               actuator::DutyCycleMethod::Signal, 100ms);
}

} // namespace

TEST_CASE("the signal duty cycle stops the work for the share of each slot the quota leaves") {
    test::FakeCgroupTree tree;
    Child child;
    auto loop = test::newLoop();
    auto actuator = signalCycle(loop.get(), layoutWith(tree, child.pid()));
    REQUIRE(actuator);
    auto& duty = **actuator;
    CHECK(duty.name() == "signal-duty-cycle");
    CHECK_FALSE(duty.capsByCpuBandwidth()); // no cpu.max: nothing for a sched_ext scheduler to ignore

    // Until a quota is applied, the work is stopped (the daemon starts it frozen).
    CHECK(test::runLoopUntil(loop.get(), [&] { return child.state() == 'T'; }));

    // Half a CPU for one process on one CPU: it runs and stops in turn, about half the time each.
    REQUIRE(duty.apply(0.5, 1));
    CHECK(test::runLoopUntil(loop.get(), [&] { return child.state() != 'T'; }));
    CHECK(test::runLoopUntil(loop.get(), [&] { return child.state() == 'T'; }));
    CHECK(test::runLoopUntil(loop.get(), [&] { return child.state() != 'T'; }));
    CHECK_FALSE(duty.frozen());
    const double share = stoppedShare(loop.get(), child, 1500ms);
    CHECK(share > 0.2);
    CHECK(share < 0.8);

    // No quota: stopped for good.
    REQUIRE(duty.apply(0.0, 1));
    CHECK(test::runLoopUntil(loop.get(), [&] { return duty.frozen(); })); // from the next slot on
    CHECK(test::runLoopUntil(loop.get(), [&] { return child.state() == 'T'; }));
    CHECK(stoppedShare(loop.get(), child, 500ms) == 1.0);

    // The whole CPU: never stopped.
    REQUIRE(duty.apply(1.0, 1));
    CHECK(test::runLoopUntil(loop.get(), [&] { return child.state() != 'T'; }));
    CHECK(stoppedShare(loop.get(), child, 500ms) == 0.0);
}

TEST_CASE("releasing the signal duty cycle lets the work run until a quota is applied again") {
    test::FakeCgroupTree tree;
    Child child;
    auto loop = test::newLoop();
    auto actuator = signalCycle(loop.get(), layoutWith(tree, child.pid()));
    REQUIRE(actuator);
    auto& duty = **actuator;
    CHECK(test::runLoopUntil(loop.get(), [&] { return child.state() == 'T'; }));

    REQUIRE(duty.release());
    CHECK(child.state() != 'T'); // SIGCONT is sent at once
    CHECK(stoppedShare(loop.get(), child, 500ms) == 0.0);

    REQUIRE(duty.apply(0.0, 1));
    CHECK(test::runLoopUntil(loop.get(), [&] { return child.state() == 'T'; }));
}

TEST_CASE("destroying the signal duty cycle leaves the work running") {
    test::FakeCgroupTree tree;
    Child child;
    auto loop = test::newLoop();
    {
        auto actuator = signalCycle(loop.get(), layoutWith(tree, child.pid()));
        REQUIRE(actuator);
        CHECK(test::runLoopUntil(loop.get(), [&] { return child.state() == 'T'; }));
    }
    CHECK(test::runLoopUntil(
        loop.get(), [&] { return child.state() != 'T'; }, 1s));
    CHECK(stoppedShare(loop.get(), child, 300ms) == 0.0);
}

TEST_CASE("a signal duty cycle needs the work's cgroup") {
    test::FakeCgroupTree tree;
    auto loop = test::newLoop();
    auto actuator = actuator::DutyCycleActuator::create(loop.get(), layoutWith(tree, 1), "",
                                                        actuator::DutyCycleMethod::Signal, 100ms);
    REQUIRE_FALSE(actuator);
    CHECK_THAT(actuator.error().message, Catch::Contains("no cgroup"));
}

namespace {

// A fake v2 tree whose cgroup /work.slice has cgroup.freeze (as it reads @p freeze) and two processes.
kernel::CgroupLayout freezableLayout(const test::FakeCgroupTree& tree, const std::string& freeze = "0\n") {
    tree.write("unified/work.slice/cgroup.procs", "4001\n4002\n");
    tree.write("unified/work.slice/cgroup.freeze", freeze);
    auto layout = kernel::CgroupLayout::parse(tree.mountLine("unified", "cgroup2", "rw,nsdelegate"));
    REQUIRE(layout);
    return *layout;
}

bool frozenFile(const test::FakeCgroupTree& tree) {
    return tree.read("unified/work.slice/cgroup.freeze").starts_with("1");
}

// Reads cgroup.freeze every 2 ms on the loop for @p span: the share of readings that found it frozen, and
// how many times it went from thawed to frozen.
struct FreezeReadings {
    double frozenShare = 0.0;
    int freezes = 0;
};
FreezeReadings readFreezeFile(sd_event* event, const test::FakeCgroupTree& tree,
                              std::chrono::milliseconds span) {
    int frozen = 0;
    int freezes = 0;
    bool was = frozenFile(tree);
    const int readings = sampleEvery(event, 2ms, span, [&] {
        const bool now = frozenFile(tree);
        frozen += now;
        freezes += now && !was;
        was = now;
    });
    REQUIRE(readings > 50);
    return {static_cast<double>(frozen) / readings, freezes};
}

auto freezerCycle(sd_event* event, kernel::CgroupLayout layout) {
    return actuator::DutyCycleActuator::create(event, std::move(layout), "/work.slice",
                                               actuator::DutyCycleMethod::Freezer, 100ms);
}

} // namespace

TEST_CASE("the duty is the quota over the CPUs the work can use at full speed") {
    CHECK(actuator::dutyForQuota(0.25, 4, 2) == Approx(0.5)); // a quarter of 4 CPUs for 2 processes
    CHECK(actuator::dutyForQuota(0.25, 4, 8) == Approx(0.25));
    CHECK(actuator::dutyForQuota(0.5, 4, 1) == 1.0); // one process cannot use more than its CPU
    CHECK(actuator::dutyForQuota(0.5, 1, 0) == Approx(0.5));
    CHECK(actuator::dutyForQuota(0.0, 4, 4) == 0.0);
    CHECK(actuator::dutyForQuota(2.0, 0, 3) == 1.0);
}

TEST_CASE("a duty cycle freezes through cgroup.freeze where the work's cgroup has one, else signals") {
    test::FakeCgroupTree tree;
    CHECK(actuator::dutyCycleMethodFor(freezableLayout(tree), "/work.slice") ==
          actuator::DutyCycleMethod::Freezer);
    test::FakeCgroupTree without;
    CHECK(actuator::dutyCycleMethodFor(layoutWith(without, 1), "/work.slice") ==
          actuator::DutyCycleMethod::Signal);
}

TEST_CASE("the freezer duty cycle freezes the work's cgroup for the share of each slot the quota leaves") {
    test::FakeCgroupTree tree;
    auto loop = test::newLoop();
    // A crashed run left the cgroup frozen: taken over thawed, then held until a quota is applied.
    auto actuator = freezerCycle(loop.get(), freezableLayout(tree, "1\n"));
    REQUIRE(actuator);
    auto& duty = **actuator;
    CHECK(duty.name() == "freezer-duty-cycle");
    CHECK_FALSE(frozenFile(tree));
    CHECK(test::runLoopUntil(loop.get(), [&] { return frozenFile(tree); }));
    CHECK(duty.frozen());

    // 30% of 2 CPUs for 2 processes: thawed for 30 ms and frozen for 70 ms of every 100 ms slot.
    REQUIRE(duty.apply(0.3, 2));
    CHECK(test::runLoopUntil(loop.get(), [&] { return !frozenFile(tree); }));
    CHECK_FALSE(duty.frozen());
    const auto cycling = readFreezeFile(loop.get(), tree, 1000ms);
    CHECK(cycling.frozenShare > 0.55);
    CHECK(cycling.frozenShare < 0.85);
    CHECK(cycling.freezes >= 8); // frozen again in (nearly) every one of the 10 slots
    CHECK(cycling.freezes <= 11);

    // No quota: frozen for good.
    REQUIRE(duty.apply(0.0, 2));
    CHECK(test::runLoopUntil(loop.get(), [&] { return duty.frozen(); }));
    CHECK(test::runLoopUntil(loop.get(), [&] { return frozenFile(tree); }));
    const auto held = readFreezeFile(loop.get(), tree, 400ms);
    CHECK(held.frozenShare == 1.0);
    CHECK(held.freezes == 0);

    // Both CPUs: never frozen.
    REQUIRE(duty.apply(1.0, 2));
    CHECK(test::runLoopUntil(loop.get(), [&] { return !frozenFile(tree); }));
    CHECK(readFreezeFile(loop.get(), tree, 400ms).frozenShare == 0.0);
}

TEST_CASE("releasing the freezer duty cycle thaws the work until a quota is applied again") {
    test::FakeCgroupTree tree;
    auto loop = test::newLoop();
    auto actuator = freezerCycle(loop.get(), freezableLayout(tree));
    REQUIRE(actuator);
    auto& duty = **actuator;
    CHECK(test::runLoopUntil(loop.get(), [&] { return frozenFile(tree); }));

    REQUIRE(duty.release());
    CHECK_FALSE(frozenFile(tree)); // thawed at once, before the work is stopped
    CHECK(readFreezeFile(loop.get(), tree, 300ms).frozenShare == 0.0);

    REQUIRE(duty.apply(0.0, 2));
    CHECK(test::runLoopUntil(loop.get(), [&] { return frozenFile(tree); }));
}

TEST_CASE("destroying the freezer duty cycle leaves the work thawed") {
    test::FakeCgroupTree tree;
    auto loop = test::newLoop();
    {
        auto actuator = freezerCycle(loop.get(), freezableLayout(tree));
        REQUIRE(actuator);
        CHECK(test::runLoopUntil(loop.get(), [&] { return frozenFile(tree); }));
    }
    CHECK_FALSE(frozenFile(tree));
}

TEST_CASE("a freezer duty cycle needs a cgroup.freeze it can write") {
    test::FakeCgroupTree tree;
    auto loop = test::newLoop();
    auto actuator = freezerCycle(loop.get(), layoutWith(tree, 1));
    REQUIRE_FALSE(actuator);
    CHECK_THAT(actuator.error().message, Catch::Contains("cgroup.freeze"));
}

TEST_CASE("a signal duty cycle thaws a cgroup that a crashed freezer duty cycle left frozen") {
    test::FakeCgroupTree tree;
    auto loop = test::newLoop();
    auto layout = freezableLayout(tree, "1\n");
    tree.write("unified/work.slice/cgroup.procs", ""); // no process to signal
    auto actuator = actuator::DutyCycleActuator::create(loop.get(), layout, "/work.slice",
                                                        actuator::DutyCycleMethod::Signal, 100ms);
    REQUIRE(actuator);
    CHECK_FALSE(frozenFile(tree));
}
