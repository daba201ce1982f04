#include "control/Controller.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

using namespace nicer::control;

namespace {

/// Parameters with the thesis's decay (one step per period) unless @p decay says otherwise.
ControllerParams params(double band, double minM, double maxM, int threshold, double epsilon,
                        double decay = 1.0) {
    ControllerParams p;
    p.multiplierDecay = decay;
    p.reserveBand = band;
    p.minMultiplier = minM;
    p.maxMultiplier = maxM;
    p.overloadThreshold = threshold;
    p.idleEpsilon = epsilon;
    REQUIRE(validate(p).ok());
    return p;
}

/// Random valid parameters and a trace rich in exact zeros, so that overloads and resets happen often.
struct RandomCase {
    ControllerParams params;
    std::vector<double> trace;
};

RandomCase randomCase(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double band = std::max(0.001, 0.5 * unit(rng));
    const double minM = std::floor(1.0 + 8.0 * unit(rng));
    const double maxM = std::min(64.0, minM + std::floor(40.0 * unit(rng)));
    const int threshold = static_cast<int>(6.0 * unit(rng));
    const double epsilon = unit(rng) < 0.5 ? 0.0 : 0.1 * unit(rng);
    const double decay = unit(rng) < 0.5 ? 1.0 : std::max(0.01, unit(rng));
    RandomCase c{params(band, minM, maxM, threshold, epsilon, decay), {}};
    const int length = 50 + static_cast<int>(400 * unit(rng));
    double zeroRunChance = unit(rng);
    for (int i = 0; i < length; ++i) {
        if (unit(rng) < 0.05) {
            zeroRunChance = unit(rng);
        }
        c.trace.push_back(unit(rng) < zeroRunChance ? 0.0 : unit(rng));
    }
    return c;
}

} // namespace

TEST_CASE("the controller starts at m = m_min, c = 0, q = 0", "[controller]") {
    const Controller c(params(0.05, 3, 16, 4, 0));
    CHECK(c.state().multiplier == 3);
    CHECK(c.state().overloadCount == 0);
    CHECK(c.state().quota == 0);
}

TEST_CASE("a golden trace computed by hand", "[controller][golden]") {
    // b = 0.125, m in [1, 8], T = 2, e = 0. Values are exact in binary, so equality is exact.
    Controller c(params(0.125, 1, 8, 2, 0));
    struct Row {
        double idle, m;
        int count;
        double q;
    };
    const std::vector<Row> expected{
        {0.5, 1, 0, 0.375},     // q = 0 + (0.5 - 1*0.125)
        {0.25, 1, 0, 0.5},      // q = 0.375 + (0.25 - 0.125)
        {0, 2, 1, 0.25},        // no idle: m doubles; q = 0.5 + (0 - 0.25)
        {0, 4, 2, 0},           // q = 0.25 - 0.5 < 0, clamped
        {0, 8, 0, 0},           // c = 3 > T: reset, m = max
        {0.75, 7, 0, 0},        // linear decay; q = 0 + (0.75 - 0.875) clamped
        {1, 6, 0, 0.25},        // q = 0 + (1 - 0.75)
        {1, 5, 0, 0.625},       // q = 0.25 + (1 - 0.625)
        {1, 4, 0, 1},           // q = 0.625 + 0.5, clamped to 1
        {0.0625, 3, 0, 0.6875}, // q = 1 + (0.0625 - 0.375)
    };
    for (const auto& row : expected) {
        const auto& s = c.step(row.idle);
        CHECK(s.multiplier == row.m);
        CHECK(s.overloadCount == row.count);
        CHECK(s.quota == row.q);
    }
}

TEST_CASE("the thesis defaults stop the work on the fifth consecutive no-idle period", "[controller]") {
    Controller c(params(0.05, 1, 16, 4, 0));
    for (int i = 0; i < 20; ++i) {
        c.step(0.5); // plenty of idle: quota saturates at 1
    }
    REQUIRE(c.state().quota == 1.0);
    // The band doubles each period and the integral shrinks by m * b: 1 - 0.1 - 0.2 - 0.4 - 0.8 (clamped).
    const double expectedMultipliers[] = {2, 4, 8, 16};
    const double expectedQuotas[] = {0.9, 0.7, 0.3, 0.0};
    for (int i = 0; i < 4; ++i) {
        c.step(0.0);
        CHECK(c.state().overloadCount == i + 1);
        CHECK(c.state().multiplier == expectedMultipliers[i]);
        CHECK(c.state().quota == Approx(expectedQuotas[i]).margin(1e-12));
    }
    c.step(0.0);
    CHECK(c.state().overloadCount == 0);
    CHECK(c.state().quota == 0.0);
    CHECK(c.state().multiplier == 16);
}

TEST_CASE("with idle, the multiplier decays linearly to m_min and stays there", "[controller]") {
    Controller c(params(0.01, 2, 32, 100, 0));
    for (int i = 0; i < 4; ++i) {
        c.step(0.0);
    }
    REQUIRE(c.state().multiplier == 32);
    for (int expected = 31; expected >= 2; --expected) {
        c.step(0.9);
        CHECK(c.state().multiplier == expected);
    }
    c.step(0.9);
    CHECK(c.state().multiplier == 2);
}

TEST_CASE("after an overload the default decay gives the idle CPU back within two periods, the thesis's in "
          "fourteen",
          "[controller]") {
    // The foreground busy on every CPU until the work is stopped (m = m_max = 16), then idle: the work's
    // quota is what the foreground leaves, less the band (b = 0.05).
    const auto periodsToNinetyPercent = [](double decay) {
        ControllerParams p;
        p.multiplierDecay = decay;
        Controller c(p);
        for (int i = 0; i < 6; ++i) {
            c.step(0.0);
        }
        REQUIRE(c.state().quota == 0.0);
        REQUIRE(c.state().multiplier == 16);
        for (int period = 1; period <= 30; ++period) {
            // Idle is what the work did not take of the machine in the period before.
            if (c.step(1.0 - c.state().quota).quota >= 0.9) {
                return period;
            }
        }
        return 0;
    };
    CHECK(ControllerParams{}.multiplierDecay == 0.25);
    CHECK(periodsToNinetyPercent(0.25) == 2);
    CHECK(periodsToNinetyPercent(0.5) == 3);
    CHECK(periodsToNinetyPercent(1.0) == 14);
}

TEST_CASE("setParams keeps the integral and clamps the multiplier into the new range", "[controller]") {
    Controller c(params(0.125, 1, 16, 10, 0));
    c.step(0.5);
    c.step(0.0);
    c.step(0.0);
    REQUIRE(c.state().multiplier == 4);
    const double quota = c.state().quota;
    c.setParams(params(0.125, 1, 2, 10, 0));
    CHECK(c.state().multiplier == 2);
    CHECK(c.state().quota == quota);
    c.reset();
    CHECK(c.state().multiplier == 1);
    CHECK(c.state().quota == 0);
}

TEST_CASE("properties hold over random traces and parameters", "[controller][property]") {
    std::mt19937_64 rng(GENERATE(1u, 2u, 3u, 42u, 2015u, 9218u));
    for (int round = 0; round < 50; ++round) {
        const auto rc = randomCase(rng);
        const auto& p = rc.params;
        Controller c(p);
        ControllerState prev = c.state();
        int noIdleRun = 0; // consecutive no-idle periods since the last reset
        for (const double idle : rc.trace) {
            const auto& s = c.step(idle);
            INFO("band " << p.reserveBand << " m [" << p.minMultiplier << ", " << p.maxMultiplier << "] T "
                         << p.overloadThreshold << " e " << p.idleEpsilon << " d " << p.multiplierDecay
                         << " idle " << idle);
            REQUIRE(s.quota >= 0.0);
            REQUIRE(s.quota <= 1.0);
            REQUIRE(s.multiplier >= p.minMultiplier);
            REQUIRE(s.multiplier <= p.maxMultiplier);

            const bool noIdle = idle <= p.idleEpsilon;
            noIdleRun = noIdle ? noIdleRun + 1 : 0;
            if (noIdle && noIdleRun == p.overloadThreshold + 1) {
                // The reset: exactly after threshold+1 consecutive no-idle periods.
                REQUIRE(s.overloadCount == 0);
                REQUIRE(s.quota == 0.0);
                REQUIRE(s.multiplier == p.maxMultiplier);
                noIdleRun = 0;
            } else if (noIdle) {
                REQUIRE(s.overloadCount == noIdleRun);
                REQUIRE(s.multiplier == std::min(2.0 * prev.multiplier, p.maxMultiplier));
                REQUIRE(s.quota == std::clamp(prev.quota + (idle - s.multiplier * p.reserveBand), 0.0, 1.0));
            } else {
                REQUIRE(s.overloadCount == 0);
                // Decay: to d·m and by at least one step (d = 1: the thesis's one step per period).
                REQUIRE(s.multiplier ==
                        std::max(std::min(prev.multiplier - 1.0, p.multiplierDecay * prev.multiplier),
                                 p.minMultiplier));
                REQUIRE(s.quota == std::clamp(prev.quota + (idle - s.multiplier * p.reserveBand), 0.0, 1.0));
            }
            prev = s;
        }
    }
}

TEST_CASE("the controller is deterministic: the same trace gives the same states", "[controller][property]") {
    std::mt19937_64 rng(7);
    const auto rc = randomCase(rng);
    Controller a(rc.params);
    Controller b(rc.params);
    for (const double idle : rc.trace) {
        const auto sa = a.step(idle);
        const auto& sb = b.step(idle);
        REQUIRE(sa.quota == sb.quota);
        REQUIRE(sa.multiplier == sb.multiplier);
        REQUIRE(sa.overloadCount == sb.overloadCount);
    }
}

TEST_CASE("steady idle above the band settles the quota so that idle stays near the band", "[controller]") {
    // A crude plant: the machine's idle is what the work leaves, 1 - foreground - quota.
    Controller c(params(0.05, 1, 16, 4, 0));
    const double foreground = 0.3;
    double idle = 1.0 - foreground;
    for (int i = 0; i < 200; ++i) {
        const double q = c.step(idle).quota;
        idle = std::max(0.0, 1.0 - foreground - q);
    }
    CHECK(idle == Approx(0.05).margin(1e-9));
    CHECK(c.state().quota == Approx(0.65).margin(1e-9));
}

TEST_CASE("the reserve kept is the band times the multiplier, at most the whole machine", "[Controller]") {
    CHECK(reserveKept(0.05, 1.0) == Approx(0.05));
    CHECK(reserveKept(0.05, 4.0) == Approx(0.2));
    CHECK(reserveKept(0.3, 4.0) == 1.0);
}

TEST_CASE("the outside signal: a golden trace computed by hand", "[controller][golden][outside]") {
    // b = 0.125, m in [1, 8], T = 2, e = 0, decay 0.25. Values are exact in binary, so equality is exact.
    // The same trace is tests/data/traces/outside-hog.csv; your programs use what idle, work and outside
    // leave.
    Controller c(params(0.125, 1, 8, 2, 0, 0.25));
    struct Row {
        double idle, work, outside, m;
        int count;
        double q;
    };
    const std::vector<Row> expected{
        {0.5, 0, 0, 1, 0, 1},           // nothing outside: no band, no cap
        {0, 0.5, 0.5, 2, 1, 0},         // a hog outside takes half: q = min(1, 0.5) + (0 - max(0.25, 0.5))
        {0, 0.25, 0.75, 4, 2, 0},       // q = 0 + (0 - max(0.5, 0.75)) < 0, clamped
        {0, 0.25, 0.75, 8, 0, 0},       // the work still ran (its window): c = 3 > T, stopped, m = max
        {0, 0, 1, 2, 0, 0},             // stopped, it holds nothing: no overload; q = 0 + (1 - 0 - 1 - 0.25)
        {0, 0, 0, 1, 0, 1},             // the hog ends, your programs take it all: no band, no cap
        {0.25, 0.75, 0, 1, 0, 1},       // nothing outside
        {0.25, 0.5, 0.25, 1, 0, 0.625}, // a light load outside, over one band: q = 0.5 + (0.25 - 0.125)
        {0.125, 0.625, 0.25, 1, 0, 0.625}, // held there: q = 0.625 + (0.125 - 0.125)
        {0, 0.0625, 0.0625, 1, 0, 1},      // your programs take the rest; the outside is within a band
        {0, 0.0625, 0.25, 1, 0, 0.625},    // no idle, but the work holds less than a band: no overload;
                                           // q = 0.0625 + (1 - 0.0625 - 0.25 - 0.125)
    };
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("step " << i);
        const auto& row = expected[i];
        const auto& s = c.stepOutside(row.idle, row.work, row.outside);
        CHECK(s.multiplier == row.m);
        CHECK(s.overloadCount == row.count);
        CHECK(s.quota == row.q);
    }
}

TEST_CASE("the outside signal leaves your programs to the kernel", "[controller][outside]") {
    const auto p = params(0.05, 1, 16, 4, 0, 0.25);
    SECTION("your programs using every CPU neither cut the quota nor count as overload") {
        Controller c(p);
        for (int i = 0; i < 50; ++i) {
            const auto& s = c.stepOutside(0.0, 0.0, 0.0);
            CHECK(s.quota == 1.0);
            CHECK(s.overloadCount == 0);
            CHECK(s.multiplier == 1.0);
        }
    }
    SECTION("an idle machine gives the work all of it, where the thesis keeps one band") {
        Controller outside(p);
        Controller thesis(p);
        double q = 0.0;
        for (int i = 0; i < 20; ++i) {
            q = outside.stepOutside(1.0 - outside.state().quota, outside.state().quota, 0.0).quota;
            thesis.step(1.0 - thesis.state().quota);
        }
        CHECK(q == 1.0);
        CHECK(thesis.state().quota == Approx(1.0 - p.reserveBand));
    }
    SECTION("a steady load outside keeps one band of idle beside it") {
        // The work takes what its quota allows, the machine keeps the rest idle.
        Controller c(p);
        for (int i = 0; i < 20; ++i) {
            c.stepOutside(1.0 - c.state().quota - 0.3, c.state().quota, 0.3);
        }
        CHECK(c.state().quota == Approx(1.0 - 0.3 - p.reserveBand));
    }
}

TEST_CASE("a hog outside has the machine from the first overload, and a light load is cut by the band",
          "[controller][outside]") {
    const auto p = params(0.05, 1, 16, 4, 0, 0.25);
    SECTION("a hog outside takes half of an uncapped work's machine: the work is cut to nothing at once") {
        Controller c(p);
        CHECK(c.stepOutside(0.0, 1.0, 0.0).quota == 1.0); // your programs, or nothing: no cap
        const auto& s = c.stepOutside(0.0, 0.5, 0.5);
        CHECK(s.overloadCount == 1);
        CHECK(s.multiplier == 2.0);
        CHECK(s.quota == 0.0); // 0.5 + (0 - max(0.1, 0.5)); with the band alone 0.4, then 0.2, then 0
    }
    SECTION("a light load outside over one band is cut by the doubled band, as the thesis cuts") {
        Controller c(p);
        CHECK(c.stepOutside(0.0, 1.0, 0.0).quota == 1.0);
        const auto& s = c.stepOutside(0.0, 0.92, 0.08);
        CHECK(s.overloadCount == 1);
        CHECK(s.quota == Approx(0.92 - 2 * 0.05)); // max(0.1, 0.08) = 0.1
        // Satisfied, it leaves idle beside it: the quota climbs back to one band below what it leaves.
        for (int i = 0; i < 10; ++i) {
            c.stepOutside(1.0 - c.state().quota - 0.08, c.state().quota, 0.08);
        }
        CHECK(c.state().quota == Approx(1.0 - 0.08 - 0.05));
        CHECK(c.state().overloadCount == 0);
    }
}

TEST_CASE("the outside signal keeps the quota a share of the machine on random traces",
          "[controller][outside][property]") {
    std::mt19937_64 rng(1234);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int n = 0; n < 200; ++n) {
        auto rc = randomCase(rng);
        Controller c(rc.params);
        for (const double idle : rc.trace) {
            const double outside = (1.0 - idle) * unit(rng);
            const double work = std::min(c.state().quota, 1.0 - idle - outside) * unit(rng);
            const double before = c.state().quota;
            const auto& s = c.stepOutside(idle, work, outside);
            if (s.overloadCount > 0) {
                // An overload gives the outside at least as much again as it had.
                REQUIRE(s.quota <= std::max(0.0, std::min(before, work) + idle - outside) + 1e-12);
            }
            REQUIRE(s.quota >= 0.0);
            REQUIRE(s.quota <= 1.0);
            REQUIRE(s.multiplier >= rc.params.minMultiplier);
            REQUIRE(s.multiplier <= rc.params.maxMultiplier);
            REQUIRE(s.overloadCount <= rc.params.overloadThreshold);
            if (outside <= rc.params.reserveBand) {
                // Nothing outside worth a band: no overload, and no cap once the band is back at its minimum.
                REQUIRE(s.overloadCount == 0);
                if (s.multiplier == rc.params.minMultiplier) {
                    REQUIRE(s.quota == 1.0);
                }
            }
        }
    }
}

TEST_CASE("signal names round-trip and unknown ones are refused", "[controller][outside]") {
    for (const auto s : {Signal::Auto, Signal::Machine, Signal::Outside}) {
        CHECK(parseSignal(signalName(s)) == s);
    }
    CHECK_FALSE(parseSignal("Outside").has_value());
    CHECK_FALSE(parseSignal("").has_value());
}
