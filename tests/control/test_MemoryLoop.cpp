#include "control/MemoryLoop.h"

#include <catch2/catch.hpp>

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
