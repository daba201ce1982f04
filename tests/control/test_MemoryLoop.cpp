#include "control/MemoryLoop.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

using nicer::control::MemoryHold;
using nicer::control::MemoryLoop;
using nicer::control::MemoryReading;
using nicer::control::MemoryStage;

namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;
constexpr double kAllowed = 0.01; // memory-stall's default
constexpr double kResume = 60.0;

MemoryReading reading(double stall, std::uint64_t work, bool swap = false, int instances = 4) {
    return {.outsideStall = stall,
            .workBytes = work,
            .ceilingBytes = 4 * kGiB,
            .workCanSwap = swap,
            .instances = instances};
}

/// @p periods of one second at @p stall; the last hold.
MemoryHold steps(MemoryLoop& loop, int periods, const MemoryReading& now) {
    MemoryHold hold;
    for (int i = 0; i < periods; ++i) {
        hold = loop.step(now, kAllowed, 1.0, kResume);
    }
    return hold;
}

} // namespace

TEST_CASE("a calm machine leaves the work its profile's memory", "[MemoryLoop]") {
    MemoryLoop loop;
    const auto hold = steps(loop, 30, reading(0.004, 3 * kGiB));
    CHECK(hold.stage == MemoryStage::Free);
    CHECK(hold.limitBytes == 0);
    CHECK(hold.cap == 1.0);
    CHECK(hold.reason.empty());
}

TEST_CASE("without a stall allowed there is no memory rule", "[MemoryLoop]") {
    MemoryLoop loop;
    const auto hold = loop.step(reading(0.5, 3 * kGiB), 0.0, 1.0, kResume);
    CHECK(hold.stage == MemoryStage::Free);
    CHECK(hold.limitBytes == 0);
}

TEST_CASE(
    "a stall beside the work lowers its memory under what it holds at once, the more the stall the more",
    "[MemoryLoop]") {
    MemoryLoop mild;
    const auto a = mild.step(reading(0.02, 3 * kGiB), kAllowed, 1.0, kResume);
    CHECK(a.stage == MemoryStage::Reclaiming);
    CHECK(a.limitBytes < 3 * kGiB);
    CHECK(a.reclaimBytes == 3 * kGiB - a.limitBytes);
    CHECK(a.cap == 1.0); // the CPU is not held for memory yet
    CHECK(a.reason == "programs beside the work waited on memory 2% of the time: its memory held to 2.7 GiB");

    MemoryLoop hard;
    const auto b = hard.step(reading(0.2, 3 * kGiB), kAllowed, 1.0, kResume);
    CHECK(b.limitBytes < a.limitBytes);
    CHECK(b.limitBytes >= 3 * kGiB * 3 / 4); // a quarter a period at most: a loop, not a switch

    // A work far under its ceiling is lowered from what it holds, not from the ceiling.
    MemoryLoop small;
    CHECK(small.step(reading(0.02, kGiB), kAllowed, 1.0, kResume).limitBytes < kGiB);
}

TEST_CASE("a stall that stays freezes the work, and without swap stops an instance with the freeze, then one "
          "every few seconds, never more than it has",
          "[MemoryLoop]") {
    MemoryLoop loop;
    const auto before = steps(loop, 1, reading(0.05, 3 * kGiB, false, 2));
    CHECK(before.stage == MemoryStage::Reclaiming);
    CHECK(before.cap == 1.0);
    // Without swap a lower memory.high frees only the work's page cache: a second period of stall is enough.
    const auto frozen = loop.step(reading(0.05, 3 * kGiB, false, 2), kAllowed, 1.0, kResume);
    CHECK(frozen.cap == 0.0);
    CHECK(frozen.instancesStopped == 1);
    CHECK(frozen.stage == MemoryStage::Stopped);
    CHECK(frozen.reason ==
          "programs beside the work waited on memory 5% of the time: 1 instance stopped to "
          "free its memory (no swap to take it), the work frozen, its memory held to 1.7 GiB");
    CHECK(steps(loop, 4, reading(0.05, 2 * kGiB, false, 2)).instancesStopped == 1);
    CHECK(steps(loop, 1, reading(0.05, 2 * kGiB, false, 2)).instancesStopped == 2);
    CHECK(steps(loop, 30, reading(0.05, kGiB, false, 2)).instancesStopped == 2);
}

TEST_CASE("without swap and with memory nearly gone, an instance is stopped at once, stall or none, from a "
          "period or a trigger",
          "[MemoryLoop]") {
    auto none = reading(0.0, 3 * kGiB);
    none.totalBytes = 8 * kGiB;
    none.availableBytes = 200ULL << 20;
    const auto quiet = MemoryLoop().step(none, kAllowed, 1.0, kResume);
    CHECK(quiet.instancesStopped == 1);
    CHECK(quiet.reason == "only 200.0 MiB of memory available and no swap: 1 instance stopped to free its "
                          "memory (no swap to take it), the work frozen, its memory held to 2.4 GiB");

    auto scarce = reading(0.02, 3 * kGiB);
    scarce.totalBytes = 8 * kGiB;
    scarce.availableBytes = 300ULL << 20; // under 5% of 8 GiB: the kernel is about to kill
    MemoryLoop period;
    const auto a = period.step(scarce, kAllowed, 1.0, kResume);
    CHECK(a.instancesStopped == 1);
    CHECK(a.cap == 0.0);
    MemoryLoop trigger;
    const auto b = trigger.urgent(scarce, kAllowed);
    CHECK(b.instancesStopped == 1);
    CHECK(b.stage == MemoryStage::Stopped);
    // With room left, or with swap, the first stall only lowers memory.high.
    auto roomy = scarce;
    roomy.availableBytes = 2 * kGiB;
    CHECK(MemoryLoop().step(roomy, kAllowed, 1.0, kResume).instancesStopped == 0);
    auto swap = scarce;
    swap.workCanSwap = true;
    CHECK(MemoryLoop().urgent(swap, kAllowed).instancesStopped == 0);
}

TEST_CASE("an instance the kernel's OOM killer took is kept stopped until there is room, not started into "
          "the same shortage",
          "[MemoryLoop]") {
    MemoryLoop loop;
    auto killed = reading(0.0, 1 * kGiB, false, 2);
    killed.totalBytes = 8 * kGiB;
    killed.availableBytes = 1 * kGiB;
    killed.oomKills = 1;
    const auto a = loop.step(killed, kAllowed, 1.0, 3.0);
    CHECK(a.instancesStopped == 1);
    CHECK(a.cap == 0.0);
    CHECK(a.reason ==
          "the kernel's OOM killer took some of the work: 1 instance stopped to free its memory (no "
          "swap to take it), the work frozen, its memory held to 972.8 MiB");
    // Calm, but no room for the instance (1 GiB) and 10% of the machine beyond it: it stays stopped.
    auto calm = killed;
    calm.oomKills = 0;
    const auto calmFor = [&](int periods) {
        MemoryHold hold;
        for (int i = 0; i < periods; ++i) {
            hold = loop.step(calm, kAllowed, 1.0, 3.0);
        }
        return hold;
    };
    const auto b = calmFor(30);
    CHECK(b.instancesStopped == 1);
    CHECK_THAT(b.reason, Catch::Contains("until 10% of the machine's memory is free"));
    // The program ended: room, and the instance starts again.
    calm.availableBytes = 4 * kGiB;
    CHECK(calmFor(10).instancesStopped == 0);
}

TEST_CASE("with swap a frozen work's pages can leave: instances are stopped only if the stall stays on",
          "[MemoryLoop]") {
    MemoryLoop loop;
    const auto frozen = steps(loop, 5, reading(0.05, 3 * kGiB, true));
    CHECK(frozen.stage == MemoryStage::Frozen);
    CHECK(frozen.cap == 0.0);
    CHECK(frozen.instancesStopped == 0);
    CHECK(steps(loop, 19, reading(0.05, 3 * kGiB, true)).instancesStopped == 0);
    CHECK(steps(loop, 1, reading(0.05, 3 * kGiB, true)).instancesStopped == 1);
}

TEST_CASE("with swap and memory nearly gone, memory.high comes down before any stall, and nothing is stopped",
          "[MemoryLoop]") {
    auto low = reading(0.0, 3 * kGiB, true);
    low.totalBytes = 8 * kGiB;
    low.availableBytes = 300ULL << 20; // under 5%
    MemoryLoop loop;
    const auto hold = loop.step(low, kAllowed, 1.0, kResume);
    CHECK(hold.stage == MemoryStage::Frozen);
    // Down by what the machine lacks of 10% available (819 - 300 MiB), not a few percent.
    CHECK(static_cast<double>(hold.limitBytes) ==
          Approx(static_cast<double>(3 * kGiB - (low.totalBytes / 10 - low.availableBytes))).margin(1.0));
    CHECK(hold.cap == 0.0); // held still while its pages leave
    CHECK(hold.instancesStopped == 0);
    CHECK(hold.reason == "only 300.0 MiB of memory available: the work held still while its pages leave, its "
                         "memory held to 2.5 GiB");
    CHECK(hold.pressed);
    MemoryLoop woken;
    const auto urgent = woken.urgent(low, kAllowed);
    CHECK(urgent.pressed); // a trigger's wake-up acts (and is logged) though the stall read is 0
    CHECK(urgent.instancesStopped == 0);
    // Over 5% available and no stall: nothing to do.
    low.availableBytes = kGiB;
    MemoryLoop roomy;
    const auto free = roomy.step(low, kAllowed, 1.0, kResume);
    CHECK(free.stage == MemoryStage::Free);
    CHECK_FALSE(free.pressed);
}

TEST_CASE("with swap the work is held still while its pages leave, and climbs back without the resume delay",
          "[MemoryLoop]") {
    MemoryLoop loop;
    const auto lowered = loop.step(reading(0.03, 3 * kGiB, true), kAllowed, 1.0, kResume);
    CHECK(lowered.stage == MemoryStage::Frozen);
    CHECK(lowered.cap == 0.0);
    CHECK(lowered.reclaimBytes > 0);
    CHECK(lowered.reason == "programs beside the work waited on memory 3% of the time: the work held still "
                            "while its pages leave, its memory held to 2.5 GiB");
    // Without swap a work held still would keep its pages: the CPU is not held for that.
    MemoryLoop noSwap;
    CHECK(noSwap.step(reading(0.03, 3 * kGiB), kAllowed, 1.0, kResume).cap == 1.0);
    // A trigger between periods holds it still as well.
    MemoryLoop woken;
    CHECK(woken.urgent(reading(0.03, 3 * kGiB, true), kAllowed).cap == 0.0);

    // Its pages left and the stall passed: it is not frozen for the stall, so no resume delay.
    auto hold = loop.step(reading(0.004, lowered.limitBytes, true), kAllowed, 1.0, kResume);
    CHECK(hold.cap == Approx(0.1));
    hold = steps(loop, 8, reading(0.004, lowered.limitBytes, true));
    CHECK(hold.cap == Approx(0.9));
    CHECK(hold.limitBytes == lowered.limitBytes); // the memory given back only after 10 s of calm
    hold = steps(loop, 2, reading(0.004, lowered.limitBytes, true));
    CHECK(hold.cap == 1.0);
    CHECK(hold.stage == MemoryStage::Reclaiming);
}

TEST_CASE(
    "once calm, the work thaws after the resume delay, climbs back smoothly, and gets its instances and "
    "memory back slowly",
    "[MemoryLoop]") {
    MemoryLoop loop;
    steps(loop, 15, reading(0.05, 3 * kGiB)); // frozen, 3 instances stopped
    auto hold = steps(loop, 59, reading(0.0, kGiB));
    CHECK(hold.cap == 0.0); // still waiting
    CHECK(hold.reason.starts_with("memory calm again: 3 instances stopped"));
    hold = steps(loop, 1, reading(0.0, kGiB));
    double cap = hold.cap;
    CHECK(cap > 0.0);
    CHECK(cap <= 0.1);
    int stopped = hold.instancesStopped;
    CHECK(stopped == 3);
    for (int i = 0; i < 400; ++i) { // an instance back each resume delay, the memory 1% a second
        hold = loop.step(reading(0.0, kGiB), kAllowed, 1.0, kResume);
        CHECK(hold.cap >= cap);
        CHECK(hold.cap - cap <= 0.1 + 1e-9);
        CHECK(hold.instancesStopped <= stopped);
        CHECK(hold.instancesStopped >= stopped - 1); // one at a time
        cap = hold.cap;
        stopped = hold.instancesStopped;
    }
    CHECK(hold.stage == MemoryStage::Free);
    CHECK(hold.limitBytes == 0);
}

TEST_CASE("a stall between half and all of what is allowed holds the work where it is", "[MemoryLoop]") {
    MemoryLoop loop;
    const auto lowered = loop.step(reading(0.03, 3 * kGiB), kAllowed, 1.0, kResume);
    const auto held = steps(loop, 60, reading(0.007, 3 * kGiB));
    CHECK(held.limitBytes == lowered.limitBytes);
    CHECK(held.stage == MemoryStage::Reclaiming);
}

TEST_CASE(
    "on a machine where the work's memory makes the others wait, the loop settles with them calm and the "
    "work holding what is left",
    "[MemoryLoop]") {
    // 8 GiB; a foreground that needs 5 GiB; the work wants 4 GiB of a 4 GiB ceiling and holds what
    // memory.high leaves it (reclaimed at once: swap). The others wait in proportion to how far memory is
    // overcommitted.
    const double total = 8.0;
    const double foreground = 5.0;
    MemoryLoop loop;
    double work = 4.0;
    MemoryHold hold;
    double lastStall = 0.0;
    for (int i = 0; i < 600; ++i) {
        lastStall = std::clamp((foreground + work - total) / total, 0.0, 1.0);
        hold = loop.step({.outsideStall = lastStall,
                          .workBytes = static_cast<std::uint64_t>(work * kGiB),
                          .ceilingBytes = 4 * kGiB,
                          .workCanSwap = true,
                          .instances = 1},
                         kAllowed, 1.0, kResume);
        const double limit = hold.limitBytes == 0 ? 4.0 : static_cast<double>(hold.limitBytes) / kGiB;
        work = std::min(4.0, limit);
    }
    CHECK(lastStall <= kAllowed);
    CHECK(work >= 3.0 - 0.5); // what the foreground leaves, less no more than a step or two
    CHECK(hold.cap == 1.0);
}

namespace {

/// A machine the memory rule was not tuned on: its size, what the volunteer's programs need, the work's
/// instances and what they hold together, and how the kernel takes the work's pages back. With swap, the
/// work's memory follows memory.high with a time constant (reclaim and swap-out are not instant); without,
/// memory.high takes nothing of what the work has touched, and only a stopped instance frees its share.
struct MemoryPlant {
    double totalGiB;
    double foregroundShare; ///< of the machine, while the programs run
    double workShare;       ///< of the machine, what the work would hold unchecked (under the fence)
    bool swap;
    double tauSeconds; ///< the work's memory follows memory.high (with swap)
    int instances;
};

/// What the rule did to the work on @p plant: 30 s calm, the programs for 300 s, then 270 s calm.
struct MemoryRun {
    double lastStall = 0.0; ///< the most in the last 60 s of the programs
    int stageChanges = 0;   ///< in the last 60 s of the programs
    double heldLate = 0.0;  ///< GiB the work held at the end of the programs
    double heldEnd = 0.0;   ///< GiB the work held at the end
    int stoppedEnd = 0;
    double capEnd = 0.0;
};

MemoryRun runPlant(const MemoryPlant& p) {
    constexpr double kCeilingShare = 0.45; // the fence's MemoryHigh
    const double total = p.totalGiB;
    const double ceiling = kCeilingShare * total;
    const double wanted = std::min(p.workShare * total, ceiling);
    MemoryLoop loop;
    MemoryHold hold;
    MemoryRun run;
    double held = wanted;
    for (int t = 0; t < 600; ++t) {
        const bool programs = t >= 30 && t < 330;
        const double need = programs ? p.foregroundShare * total : 0.0;
        // The others wait as the two fill the last 5% of the machine.
        const double stall = std::clamp((need + held - 0.95 * total) / (0.05 * total), 0.0, 1.0);
        const auto before = hold.stage;
        hold = loop.step(
            {.outsideStall = stall,
             .workBytes = static_cast<std::uint64_t>(held * kGiB),
             .ceilingBytes = static_cast<std::uint64_t>(ceiling * kGiB),
             .workCanSwap = p.swap,
             .instances = p.instances,
             .availableBytes = static_cast<std::uint64_t>(std::max(0.0, total - need - held) * kGiB),
             .totalBytes = static_cast<std::uint64_t>(total * kGiB)},
            kAllowed, 1.0, 3.0);
        if (programs && t >= 270) {
            run.lastStall = std::max(run.lastStall, stall);
            run.stageChanges += hold.stage != before ? 1 : 0;
        }
        // The work: its running instances want their share; a frozen one allocates nothing more.
        const double running = wanted * (p.instances - hold.instancesStopped) / p.instances;
        const double limit = hold.limitBytes > 0 ? static_cast<double>(hold.limitBytes) / kGiB : ceiling;
        double target = std::min(running, limit);
        if (!p.swap) {
            target = std::min(running, std::max(target, held)); // memory.high takes nothing it touched
        }
        if (target < held) {
            held += (target - held) * (p.swap ? 1.0 - std::exp(-1.0 / p.tauSeconds) : 1.0);
        } else if (hold.cap > 0.0) {
            held = std::min(target, held + 0.05 * total); // it allocates at most 5% of the machine a second
        }
        held = std::min(held, running);
        if (t == 329) {
            run.heldLate = held;
        }
    }
    run.heldEnd = held;
    run.stoppedEnd = hold.instancesStopped;
    run.capEnd = hold.cap;
    return run;
}

} // namespace

TEST_CASE("the memory rule holds on a family of machines it was not tuned on, and gives the work back",
          "[MemoryLoop]") {
    for (const double total : {2.0, 8.0, 32.0}) {
        for (const double foreground : {0.3, 0.5, 0.7}) {
            for (const double workShare : {0.3, 0.45}) {
                for (const int instances : {1, 2, 4, 8}) {
                    for (const double tau : {0.0, 1.0, 5.0, 20.0}) {
                        const MemoryPlant plant{total, foreground, workShare, tau > 0.0, tau, instances};
                        const auto run = runPlant(plant);
                        INFO("machine " << total << " GiB, programs " << foreground << ", work " << workShare
                                        << ", " << instances << " instances, "
                                        << (tau > 0.0 ? "swap, tau " + std::to_string(tau) : "no swap"));
                        INFO("stall " << run.lastStall << ", stage changes " << run.stageChanges << ", held "
                                      << run.heldLate << " then " << run.heldEnd << " GiB, " << run.stoppedEnd
                                      << " stopped, cap " << run.capEnd);
                        // Settled: the others calm, and no cycling between stages.
                        CHECK(run.lastStall <= kAllowed);
                        CHECK(run.stageChanges <= 1);
                        // The work keeps what the programs leave, less at most an instance or 10% of the
                        // machine's memory.
                        const double wanted = std::min(workShare, 0.45) * total;
                        const double left = std::clamp(0.95 * total - foreground * total, 0.0, wanted);
                        const double slack = std::max(wanted / instances, 0.1 * total);
                        CHECK(run.heldLate >= left - slack);
                        // Given back once the programs end.
                        CHECK(run.stoppedEnd == 0);
                        CHECK(run.capEnd == 1.0);
                        CHECK(run.heldEnd >= 0.9 * wanted);
                    }
                }
            }
        }
    }
}
