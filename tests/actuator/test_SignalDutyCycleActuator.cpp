#include "EventLoop.h"
#include "actuator/SignalDutyCycleActuator.h"
#include "fakes/ChildProcess.h"
#include "fakes/FakeCgroupTree.h"
#include "sd/Timer.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace nicer;
using namespace std::chrono_literals;

namespace {

using Child = test::ChildProcess;

// A fake v2 tree whose cgroup /work.slice holds @p pid.
systemd::CgroupLayout layoutWith(const test::FakeCgroupTree& tree, pid_t pid) {
    tree.write("unified/work.slice/cgroup.procs", std::to_string(pid) + "\n");
    auto layout = systemd::CgroupLayout::parse(tree.mountLine("unified", "cgroup2", "rw,nsdelegate"));
    REQUIRE(layout);
    return *layout;
}

// Samples the child's state every 5 ms on the loop for @p span; the share of samples in which it was stopped.
double stoppedShare(sd_event* event, const Child& child, std::chrono::milliseconds span) {
    int samples = 0;
    int stopped = 0;
    sd::Timer sampler;
    auto created = sd::Timer::create(event, [&] {
        ++samples;
        stopped += child.state() == 'T';
        sampler.armIn(5ms);
    });
    REQUIRE(created);
    sampler = std::move(*created);
    sampler.armIn(0ms);
    const auto end = std::chrono::steady_clock::now() + span;
    test::runLoopUntil(
        event, [&] { return std::chrono::steady_clock::now() >= end; }, span + 1s);
    REQUIRE(samples > 20);
    return static_cast<double>(stopped) / samples;
}

} // namespace

TEST_CASE("the signal duty cycle stops the work for the share of each slot the quota leaves") {
    test::FakeCgroupTree tree;
    Child child;
    auto loop = test::newLoop();
    auto actuator = actuator::SignalDutyCycleActuator::create(loop.get(), layoutWith(tree, child.pid()),
                                                              "/work.slice", 100ms);
    REQUIRE(actuator);
    auto& duty = **actuator;
    CHECK(duty.name() == "signal-duty-cycle");

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
    auto actuator = actuator::SignalDutyCycleActuator::create(loop.get(), layoutWith(tree, child.pid()),
                                                              "/work.slice", 100ms);
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
        auto actuator = actuator::SignalDutyCycleActuator::create(loop.get(), layoutWith(tree, child.pid()),
                                                                  "/work.slice", 100ms);
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
    auto actuator = actuator::SignalDutyCycleActuator::create(loop.get(), layoutWith(tree, 1), "", 100ms);
    REQUIRE_FALSE(actuator);
    CHECK_THAT(actuator.error().message, Catch::Contains("no cgroup"));
}
