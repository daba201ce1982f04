// End to end: the `nicer simulate` executable on trace files.
#include "cli/RunCommand.h"
#include "control/Controller.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <vector>

using nicer::test::parseCsv;
using nicer::test::readFile;
using nicer::test::runCommand;

namespace {

using nicer::test::kNicer;
std::string trace(const std::string& name) {
    return std::string(NICER_TEST_DATA) + "/traces/" + name;
}

} // namespace

TEST_CASE("simulate reproduces the hand-computed golden traces exactly", "[simulate][golden]") {
    struct Case {
        const char* name;
        const char* args;
    };
    const auto c =
        GENERATE(Case{"overload-reset", "--reserve-band 0.125 --max-multiplier 8 --overload-threshold 2 "
                                        "--idle-epsilon 0 --multiplier-decay 1"},
                 Case{"idle-epsilon",
                      "--reserve-band 0.0625 --idle-epsilon 0.0625 --overload-threshold 1 --max-multiplier 4 "
                      "--multiplier-decay 1"});
    CAPTURE(c.name);
    const auto r =
        runCommand(kNicer + " simulate --trace " + trace(std::string(c.name) + ".txt") + " " + c.args);
    CHECK(r.err.empty());
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == readFile(trace(std::string(c.name) + ".expected.csv")));
}

TEST_CASE("simulate reads the idle column of a CSV trace", "[simulate][golden]") {
    const auto r =
        runCommand(kNicer + " simulate --trace " + trace("csv-with-header.csv") +
                   " --reserve-band 0.25 --min-multiplier 2 --max-multiplier 8 --overload-threshold 0 "
                   "--multiplier-decay 1");
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == readFile(trace("csv-with-header.expected.csv")));
}

TEST_CASE("simulate reads its own output back and reads stdin with '-'", "[simulate]") {
    const auto first = runCommand(kNicer + " simulate --trace " + trace("overload-reset.txt"));
    REQUIRE(first.exitCode == 0);
    const auto again = runCommand("printf '%s' '" + first.out + "' | " + kNicer + " simulate --trace -");
    REQUIRE(again.exitCode == 0);
    CHECK(again.out == first.out);
}

TEST_CASE("simulate's output matches the controller field by field on random traces",
          "[simulate][property]") {
    const auto seed = GENERATE(11u, 12u, 13u);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const auto path = std::filesystem::temp_directory_path() / ("nicer-random-trace-" + std::to_string(seed));
    std::vector<double> idle;
    {
        std::ofstream out(path);
        out.precision(17);
        for (int i = 0; i < 500; ++i) {
            idle.push_back(unit(rng) < 0.3 ? 0.0 : unit(rng));
            out << idle.back() << '\n';
        }
    }
    nicer::control::ControllerParams p;
    p.reserveBand = 0.03;
    p.minMultiplier = 2;
    p.maxMultiplier = 20;
    p.overloadThreshold = 3;
    p.idleEpsilon = 0.01;
    const auto r =
        runCommand(kNicer + " simulate --trace " + path.string() +
                   " --reserve-band 0.03 --min-multiplier 2 --max-multiplier 20 --overload-threshold 3 "
                   "--idle-epsilon 0.01");
    std::filesystem::remove(path);
    REQUIRE(r.exitCode == 0);
    const auto rows = parseCsv(r.out);
    REQUIRE(rows.size() == idle.size() + 1);
    CHECK(rows[0] == std::vector<std::string>{"step", "idle", "multiplier", "overload_count", "quota"});
    nicer::control::Controller controller(p);
    for (std::size_t i = 0; i < idle.size(); ++i) {
        const auto& s = controller.step(idle[i]);
        const auto& row = rows[i + 1];
        REQUIRE(row.size() == 5);
        CHECK(std::stoul(row[0]) == i);
        CHECK(std::stod(row[1]) == Approx(idle[i]).epsilon(1e-9));
        CHECK(std::stod(row[2]) == Approx(s.multiplier).epsilon(1e-9));
        CHECK(std::stoi(row[3]) == s.overloadCount);
        CHECK(std::stod(row[4]) == Approx(s.quota).epsilon(1e-9).margin(1e-12));
    }
}

TEST_CASE("simulate rejects bad trace files with exit status 2, naming the file and line",
          "[simulate][errors]") {
    struct Case {
        const char* file;
        const char* expected;
    };
    const auto c = GENERATE(
        Case{"bad-out-of-range.txt", "bad-out-of-range.txt:3: idle fraction 1.5 is outside 0..1"},
        Case{"bad-not-a-number.txt", "bad-not-a-number.txt:5: 'half' is not a number"},
        Case{"bad-csv-row.txt", "bad-csv-row.txt:3: found 3 comma-separated fields"},
        Case{"bad-csv-no-idle.txt", "bad-csv-no-idle.txt:1:"}, Case{"missing.txt", "cannot open trace"});
    CAPTURE(c.file);
    const auto r = runCommand(kNicer + " simulate --trace " + trace(c.file));
    CHECK(r.exitCode == 2);
    CHECK(r.out.empty()); // nothing half-written on stdout
    CHECK_THAT(r.err, Catch::Contains(c.expected));
}

TEST_CASE("simulate rejects bad parameter values with exit status 2, naming the parameter",
          "[simulate][errors]") {
    struct Case {
        const char* args;
        const char* expected;
    };
    const auto c = GENERATE(
        Case{"--reserve-band 0", "reserve-band = 0 is out of range"},
        Case{"--reserve-band 0.6", "reserve-band = 0.6"}, Case{"--reserve-band abc", "--reserve-band"},
        Case{"--min-multiplier 0", "min-multiplier = 0"},
        Case{"--min-multiplier 8 --max-multiplier 4", "min-multiplier = 8 is greater than max"},
        Case{"--max-multiplier 65", "max-multiplier = 65"},
        Case{"--overload-threshold -1", "overload-threshold"},
        Case{"--overload-threshold 1.5", "--overload-threshold"},
        Case{"--idle-epsilon 0.5", "idle-epsilon = 0.5"}, Case{"--no-such-option 1", "no-such-option"});
    CAPTURE(c.args);
    const auto r = runCommand(kNicer + " simulate --trace " + trace("overload-reset.txt") + " " + c.args);
    CHECK(r.exitCode == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(c.expected));
}

TEST_CASE("simulate without --trace says it is required", "[simulate][errors]") {
    const auto r = runCommand(kNicer + " simulate");
    CHECK(r.exitCode == 2);
    CHECK_THAT(r.err, Catch::Contains("--trace"));
}

TEST_CASE("simulate replays the split signal from a trace's work and outside columns",
          "[simulate][outside]") {
    const std::string args =
        " --reserve-band 0.125 --max-multiplier 8 --overload-threshold 2 --idle-epsilon 0 "
        "--multiplier-decay 0.25";
    const auto r = runCommand(kNicer + " simulate --trace " + trace("outside-hog.csv") + args);
    CHECK(r.err.empty());
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == readFile(trace("outside-hog.expected.csv")));

    // Its output is a split trace again, and replays to itself.
    const auto again = runCommand("printf '%s' '" + r.out + "' | " + kNicer + " simulate --trace -" + args);
    REQUIRE(again.exitCode == 0);
    CHECK(again.out == r.out);

    SECTION("--signal machine replays the same trace's idle column through the thesis's controller") {
        const auto machine =
            runCommand(kNicer + " simulate --signal machine --trace " + trace("outside-hog.csv") + args);
        REQUIRE(machine.exitCode == 0);
        const auto rows = parseCsv(machine.out);
        REQUIRE(rows.size() == 12);
        CHECK(rows[0] == std::vector<std::string>{"step", "idle", "multiplier", "overload_count", "quota"});
        nicer::control::ControllerParams p;
        p.reserveBand = 0.125;
        p.maxMultiplier = 8;
        p.overloadThreshold = 2;
        p.multiplierDecay = 0.25;
        nicer::control::Controller thesis(p);
        const std::vector<double> idle{0.5, 0, 0, 0, 0, 0, 0.25, 0.25, 0.125, 0, 0};
        for (std::size_t i = 0; i < idle.size(); ++i) {
            CHECK(std::stod(rows[i + 1][4]) == thesis.step(idle[i]).quota);
        }
        // When your programs take every CPU and nothing outside needs a band (step 9), the thesis cuts the
        // work to nothing; the split signal leaves it uncapped (the kernel keeps it behind your programs).
        CHECK(rows[10][4] == "0");
        CHECK(parseCsv(r.out)[10][6] == "1");
    }
}

TEST_CASE("simulate --signal outside refuses a trace without the split columns", "[simulate][outside]") {
    const auto r = runCommand(kNicer + " simulate --signal outside --trace " + trace("overload-reset.txt"));
    CHECK(r.exitCode == 2);
    CHECK_THAT(r.err, Catch::Contains("has no 'work' and 'outside' columns"));
    const auto bad =
        runCommand(kNicer + " simulate --signal sideways --trace " + trace("overload-reset.txt"));
    CHECK(bad.exitCode != 0);
    CHECK_THAT(bad.err, Catch::Contains("'sideways' is not auto, machine or outside"));
}

TEST_CASE("simulate follows a trace's signal column period by period, and holds while paused",
          "[simulate][outside]") {
    // nicerd's own choice, as `nicer history` records it: the machine signal until cpu.idle appeared, then
    // the outside part; a pause in between.
    struct Period {
        double idle, work, outside;
        bool outsideSignal, paused;
    };
    const std::vector<Period> periods{
        {0.5, 0.25, 0.0, false, false}, {0.0, 0.5, 0.5, false, false},  {0.0, 0.5, 0.5, false, false},
        {0.0, 0.25, 0.75, true, false}, {0.0, 0.25, 0.75, true, false}, {0.5, 0.0, 0.0, true, true},
        {0.5, 0.0, 0.0, true, true},    {0.0, 0.5, 0.5, true, false},   {0.25, 0.75, 0.0, true, false}};
    const auto path = std::filesystem::temp_directory_path() / "nicer-signal-column-trace.csv";
    {
        std::ofstream out(path);
        out << "time,idle,work,outside,signal,paused\n";
        for (const auto& p : periods) {
            out << "t," << p.idle << ',' << p.work << ',' << p.outside << ','
                << (p.outsideSignal ? "outside" : "machine") << ',' << (p.paused ? 1 : 0) << '\n';
        }
    }
    const std::string args =
        " --reserve-band 0.125 --max-multiplier 8 --overload-threshold 2 --idle-epsilon 0";
    const auto r = runCommand(kNicer + " simulate --trace " + path.string() + args);
    const auto forced = runCommand(kNicer + " simulate --signal machine --trace " + path.string() + args);
    std::filesystem::remove(path);
    CHECK(r.err.empty());
    REQUIRE(r.exitCode == 0);
    const auto rows = parseCsv(r.out);
    REQUIRE(rows.size() == periods.size() + 1);
    CHECK(rows[0] == std::vector<std::string>{"step", "idle", "work", "outside", "signal", "paused",
                                              "multiplier", "overload_count", "quota"});

    // The same periods through the controller by hand, as nicerd's loop steps it.
    nicer::control::ControllerParams p;
    p.reserveBand = 0.125;
    p.maxMultiplier = 8;
    p.overloadThreshold = 2;
    nicer::control::Controller controller(p);
    bool wasPaused = false;
    for (std::size_t i = 0; i < periods.size(); ++i) {
        const auto& in = periods[i];
        if (!in.paused) {
            if (wasPaused) {
                controller.reset();
            }
            if (in.outsideSignal) {
                controller.stepOutside(in.idle, in.work, in.outside);
            } else {
                controller.step(in.idle);
            }
        }
        wasPaused = in.paused;
        const auto& row = rows[i + 1];
        CAPTURE(i);
        REQUIRE(row.size() == 9);
        CHECK(row[4] == (in.outsideSignal ? "outside" : "machine"));
        CHECK(row[5] == (in.paused ? "1" : "0"));
        CHECK(std::stod(row[6]) == Approx(controller.state().multiplier));
        CHECK(std::stoi(row[7]) == controller.state().overloadCount);
        CHECK(std::stod(row[8]) == Approx(in.paused ? 0.0 : controller.state().quota).margin(1e-12));
    }
    // The machine signal's two periods without idle overloaded; the paused ones have no quota; after the
    // pause the controller starts afresh (one overload, not a third in a row), and a quiet outside uncaps the
    // work.
    CHECK(rows[3][7] == "2");
    CHECK(rows[6][8] == "0");
    CHECK(rows[8][7] == "1");
    CHECK(rows[9][8] == "1");

    // --signal machine overrides the column: every period through the thesis's controller.
    REQUIRE(forced.exitCode == 0);
    const auto machineRows = parseCsv(forced.out);
    REQUIRE(machineRows.size() == periods.size() + 1);
    CHECK(machineRows[0] ==
          std::vector<std::string>{"step", "idle", "paused", "multiplier", "overload_count", "quota"});
}

TEST_CASE(
    "simulate's thermal model: the temperature rule holds the target, giving the work nearly all it may",
    "[simulate][thermal]") {
    // Idle every period (the user away): only the work heats, toward 40 + gain x its share. The corners of
    // the family of plants the loop is made for (docs/controller.md): time constants from 2 s to a minute,
    // 20 to 60 °C at the whole machine. 55 °C is held by a share of 15 / gain.
    const std::string tau = GENERATE("2", "10", "60");
    const double gain = GENERATE(20.0, 60.0);
    CAPTURE(tau, gain);
    const double largest = 15.0 / gain;
    const auto dir = std::filesystem::temp_directory_path() / "nicer-test-thermal";
    std::filesystem::create_directories(dir);
    const auto path = dir / "idle.txt";
    {
        std::ofstream out(path);
        for (int i = 0; i < 1200; ++i) {
            out << "0.95\n";
        }
    }
    const auto r =
        runCommand(kNicer + " simulate --trace " + path.string() + " --thermal-gain " + std::to_string(gain) +
                   " --thermal-ambient 40 --thermal-tau " + tau + " --temperature-target 55");
    REQUIRE(r.exitCode == 0);
    const auto rows = parseCsv(r.out);
    REQUIRE(rows.size() == 1201);
    CHECK(rows[0] == std::vector<std::string>{"step", "idle", "multiplier", "overload_count", "quota",
                                              "temperature", "held_by"});
    double low = 1.0;
    double high = 0.0;
    double hottest = 0.0;
    for (std::size_t i = 601; i < rows.size(); ++i) { // the second half: settled
        REQUIRE(rows[i].size() >= 6);
        const double quota = std::stod(rows[i][4]);
        low = std::min(low, quota);
        high = std::max(high, quota);
        hottest = std::max(hottest, std::stod(rows[i][5]));
    }
    CHECK(hottest <= 57.0);
    CHECK(low >= 0.9 * largest);
    CHECK(high - low <= 0.1);
    CHECK(rows[1200].size() == 7);
    CHECK(rows[1200][6] == "temperature");
    std::filesystem::remove_all(dir);
}

TEST_CASE("simulate's thermal model refuses a time constant of 0", "[simulate][thermal][errors]") {
    const auto r = runCommand(kNicer + " simulate --trace " + trace("overload-reset.txt") +
                              " --thermal-gain 60 --thermal-tau 0");
    CHECK(r.exitCode == 2);
    CHECK_THAT(r.err, Catch::Contains("--thermal-tau"));
}

TEST_CASE(
    "simulate's memory model: the memory rule takes memory from the work while your programs need it, and "
    "gives it back",
    "[simulate][memory]") {
    // 8 GiB; the work wants 4; your programs need 6 x the busy share. Five minutes light (0.1 busy), five
    // busy (0.9: 5.4 GiB, with the work's 4 over the total), five light again.
    const auto dir = std::filesystem::temp_directory_path() / "nicer-test-memory";
    std::filesystem::create_directories(dir);
    const auto path = dir / "busy.txt";
    {
        std::ofstream out(path);
        for (int i = 0; i < 900; ++i) {
            out << (i >= 300 && i < 600 ? "0.1\n" : "0.9\n");
        }
    }
    const auto r = runCommand(kNicer + " simulate --trace " + path.string() +
                              " --memory-total 8 --memory-work 4 --memory-foreground 6 --memory-share 1");
    REQUIRE(r.exitCode == 0);
    const auto rows = parseCsv(r.out);
    REQUIRE(rows.size() == 901);
    CHECK(rows[0] == std::vector<std::string>{"step", "idle", "multiplier", "overload_count", "quota",
                                              "temperature", "held_by", "memory_stall", "work_memory_gib",
                                              "memory_hold"});
    const auto at = [&](std::size_t step, std::size_t column) { return rows[step + 1][column]; };
    CHECK(std::stod(at(299, 8)) == Approx(4.0)); // light: the work keeps all it wants
    CHECK(at(299, 9).empty());
    // Busy: the rule holds the work at once, and by the end of the busy spell your programs wait no more
    // than memory-stall allows.
    CHECK_FALSE(at(301, 9).empty());
    CHECK(std::stod(at(599, 7)) <= 0.01);
    CHECK(std::stod(at(599, 8)) <= 8.0 * 0.95 - 5.4 + 0.01);
    // Light again: all of it back, the rule let go.
    CHECK(std::stod(at(899, 8)) == Approx(4.0));
    CHECK(at(899, 9).empty());
    std::filesystem::remove_all(dir);
}

TEST_CASE("simulate's memory model on machines the rule was not tuned on: small and large, with and without "
          "swap, one work or many",
          "[simulate][memory]") {
    const auto dir = std::filesystem::temp_directory_path() / "nicer-test-memory-family";
    std::filesystem::create_directories(dir);
    const auto path = dir / "busy.txt";
    {
        std::ofstream out(path); // five minutes light, five busy, five light
        for (int i = 0; i < 900; ++i) {
            out << (i >= 300 && i < 600 ? "0.1\n" : "0.9\n");
        }
    }
    struct Machine {
        double total, work, foreground;
        int instances;
        double tau;
    };
    for (const auto& m : {Machine{2, 0.9, 1.4, 2, -1}, Machine{8, 3.6, 6, 4, -1}, Machine{8, 3.6, 6, 1, 5},
                          Machine{32, 14, 22, 8, 20}, Machine{2, 0.9, 1.4, 1, 1}}) {
        std::ostringstream args;
        args << " --memory-total " << m.total << " --memory-work " << m.work << " --memory-foreground "
             << m.foreground << " --memory-instances " << m.instances << " --memory-tau " << m.tau
             << " --memory-share 1";
        INFO(args.str());
        const auto r = runCommand(kNicer + " simulate --trace " + path.string() + args.str());
        REQUIRE(r.exitCode == 0);
        const auto rows = parseCsv(r.out);
        REQUIRE(rows.size() == 901);
        const auto at = [&](std::size_t step, std::size_t column) {
            return std::stod(rows[step + 1][column]);
        };
        // Busy: settled by its last minute, with your programs waiting no more than memory-stall allows and
        // the rule in one stage, not cycling.
        double stall = 0.0;
        std::set<std::string> stages;
        for (std::size_t step = 540; step < 600; ++step) {
            stall = std::max(stall, at(step, 7));
            stages.insert(rows[step + 1][9]);
        }
        CHECK(stall <= 0.01);
        CHECK(stages.size() == 1);
        // Light again: all of it back, the rule let go.
        CHECK(at(899, 8) == Approx(m.work).epsilon(0.01));
        CHECK(rows[900][9].empty());
    }
    std::filesystem::remove_all(dir);
}
