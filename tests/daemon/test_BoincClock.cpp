#include "daemon/BoincClock.h"

#include <catch2/catch.hpp>

using namespace nicer::daemon;
using namespace std::chrono_literals;

namespace {

using Clock = BoincClock::Clock;

ClockTask task(double elapsed, double cpu, double cpus = 1.0, bool gpu = false) {
    return {"t", elapsed, cpu, cpus, gpu};
}

/**
 * BOINC's client and one task on a plant: the task computes at @p speed of its CPU all the time; BOINC's
 * clock counts the wall clock while the client runs, except for the first poll after a gap of more than
 * 10 s (client/app_control.cpp). The session's steps: a reading every 2 s while the client runs; a stop
 * lasts stopSpan. Returns the task's elapsed time when its CPU time reaches @p cpuNeeded.
 */
struct Plant {
    double speed;
    double elapsed = 0.0;
    double cpu = 0.0;
    double wall = 0.0;
    int stops = 0;

    double run(BoincClock& clock, double cpuNeeded) {
        auto now = Clock::time_point{} + 1000s;
        bool afterStop = false;
        while (cpu < cpuNeeded) {
            // The client runs for one 2 s step: it polls once a second.
            for (int poll = 0; poll < 2; ++poll) {
                elapsed += afterStop ? 0.0 : 1.0;
                afterStop = false;
                cpu += speed;
                wall += 1.0;
                now += 1s;
            }
            if (clock.onTasks(now, {{"t", elapsed, cpu, 1.0, false}}, false)) {
                clock.stopped(now);
                ++stops;
                const double span = std::chrono::duration<double>(clock.options().stopSpan).count();
                cpu += speed * span; // the task goes on under nicer's cap
                wall += span;
                now += clock.options().stopSpan;
                clock.continued(now);
                afterStop = true;
            }
        }
        return elapsed;
    }
};

} // namespace

TEST_CASE(
    "BoincClock: a task's lead is its elapsed time beyond its CPU time per CPU, slack and lead seconds") {
    const BoincClock clock; // slack 0.1, 10 s
    CHECK(clock.lead(task(100.0, 100.0)) == Approx(100.0 - 110.0 - 10.0));
    CHECK(clock.lead(task(200.0, 100.0)) == Approx(200.0 - 110.0 - 10.0));
    // A task on 4 CPUs that used 400 CPU seconds in 100 s ran at full speed.
    CHECK(clock.lead(task(100.0, 400.0, 4.0)) < 0.0);
    CHECK(clock.lead(task(300.0, 400.0, 4.0)) > 0.0);
    // A GPU task's CPU time says nothing of its progress: it never asks for a stop.
    CHECK(clock.lead(task(1000.0, 1.0, 0.2, true)) == 0.0);
}

TEST_CASE("BoincClock: asks for a stop only for a task whose clock ran ahead, not while busy, not within the "
          "window after a stop") {
    BoincClock clock;
    const auto t0 = Clock::time_point{} + 1000s;
    CHECK_FALSE(clock.onTasks(t0, {task(50.0, 45.0)}, false)); // at full speed
    CHECK_FALSE(clock.onTasks(t0, {}, false));
    CHECK(clock.onTasks(t0, {task(50.0, 45.0), task(100.0, 20.0)}, false)); // one behind is enough
    CHECK_FALSE(clock.onTasks(t0, {task(100.0, 20.0)}, true));              // an answer is awaited
    clock.stopped(t0);
    CHECK(clock.isStopped());
    CHECK_FALSE(clock.onTasks(t0 + 1s, {task(100.0, 20.0)}, false)); // already stopped
    clock.continued(t0 + 15s);
    CHECK_FALSE(clock.isStopped());
    CHECK_FALSE(clock.onTasks(t0 + 16s, {task(100.0, 20.0)}, false)); // the client's polls come first
    CHECK(clock.onTasks(t0 + 17s, {task(100.0, 20.0)}, false));
}

TEST_CASE("BoincClock: under a low share BOINC's clock counts about the task's CPU time, so a bound of twice "
          "the estimate is never reached") {
    // The case: a 61 CPU-second task, aborted at 122 s of elapsed time; BOINC alone counts the wall
    // clock, 61 / speed.
    for (const double speed : {0.8, 0.5, 0.3, 0.15, 0.08}) {
        CAPTURE(speed);
        BoincClock clock;
        Plant plant{speed};
        const double elapsed = plant.run(clock, 61.0);
        CHECK(plant.wall > 61.0 / speed - 2.0); // the stops never slowed the task
        CHECK(elapsed <= 1.1 * 61.0 + 10.0 + 2.0);
        CHECK(elapsed < 122.0);
        // At 0.8 the slack covers the whole task: BOINC's clock reaches 76 s for 61 s of CPU.
        CHECK((plant.stops > 0) == (speed < 0.8));
    }
    // At full speed the client is never stopped.
    BoincClock clock;
    Plant full{1.0};
    CHECK(full.run(clock, 61.0) == Approx(62.0).margin(1.0));
    CHECK(full.stops == 0);
}

TEST_CASE("BoincClock: says how much BOINC counted and how fast the tasks ran over the last minute") {
    BoincClock clock;
    const auto t0 = Clock::time_point{} + 1000s;
    CHECK(clock.describe(t0).empty());
    CHECK(clock.taskSpeed() < 0.0);
    CHECK(clock.countedShare(t0) == 1.0);
    // A task at 25% of its CPU, the client stopped 15 s of every 20 s.
    double cpu = 0.0;
    auto now = t0;
    for (int cycle = 0; cycle < 6; ++cycle) {
        clock.onTasks(now, {{"t", 0.0, cpu, 1.0, false}}, true);
        clock.stopped(now);
        now += 15s;
        cpu += 15.0 * 0.25;
        clock.continued(now);
        now += 5s;
        cpu += 5.0 * 0.25;
    }
    clock.onTasks(now, {{"t", 0.0, cpu, 1.0, false}}, true);
    CHECK(clock.countedShare(now) == Approx(0.25).margin(0.01));
    CHECK(clock.taskSpeed() == Approx(0.25).margin(0.01));
    CHECK(clock.describe(now) ==
          "kept: BOINC counted 25% of the last minute; its tasks ran at 25% of their CPUs");
    // A minute without a stop: nothing to say.
    clock.onTasks(now + 61s, {{"t", 0.0, cpu + 61.0, 1.0, false}}, true);
    CHECK(clock.describe(now + 61s).empty());
}

TEST_CASE("BoincClock: a stop under way counts up to now") {
    BoincClock clock;
    const auto t0 = Clock::time_point{} + 1000s;
    clock.stopped(t0);
    CHECK(clock.countedShare(t0 + 30s) == Approx(0.5));
    CHECK(clock.describe(t0 + 30s) == "kept: BOINC counted 50% of the last minute");
}
