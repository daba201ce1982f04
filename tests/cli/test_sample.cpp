// End to end: `nicer sample` on the live machine and on fixtures.
#include "cli/RunCommand.h"

#include <catch2/catch.hpp>

#include <sstream>
#include <unistd.h>

using nicer::test::runCommand;

namespace {
using nicer::test::kNicer;
}

TEST_CASE("sample prints one CSV line per period with fractions that add up to one", "[sample]") {
    const auto r = runCommand(kNicer + " sample --period 0.2 --count 3 --csv");
    REQUIRE(r.exitCode == 0);
    std::istringstream in(r.out);
    std::string line;
    std::getline(in, line);
    CHECK(line == "elapsed_s,idle,busy,cpus");
    int rows = 0;
    double lastElapsed = 0;
    while (std::getline(in, line)) {
        double elapsed = 0, idle = 0, busy = 0;
        int cpus = 0;
        REQUIRE(std::sscanf(line.c_str(), "%lf,%lf,%lf,%d", &elapsed, &idle, &busy, &cpus) == 4);
        CHECK(elapsed > lastElapsed);
        CHECK(idle >= 0.0);
        CHECK(idle <= 1.0);
        CHECK(idle + busy == Approx(1.0).margin(2e-6));
        CHECK(cpus == static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)));
        lastElapsed = elapsed;
        ++rows;
    }
    CHECK(rows == 3);
}

TEST_CASE("sample's table is readable by a person", "[sample]") {
    const auto r = runCommand(kNicer + " sample --period 0.1 --count 1");
    REQUIRE(r.exitCode == 0);
    CHECK_THAT(r.out, Catch::StartsWith("   time    idle    busy  cpus\n"));
    CHECK_THAT(r.out, Catch::Contains("%"));
}

TEST_CASE("sample rejects periods outside 10 ms .. 10 s and a bad counter file", "[sample][errors]") {
    CHECK(runCommand(kNicer + " sample --period 0.001 --count 1").exitCode == 2);
    CHECK(runCommand(kNicer + " sample --period 11 --count 1").exitCode == 2);
    CHECK(runCommand(kNicer + " sample --count -1").exitCode == 2);
    const auto r = runCommand(kNicer + " sample --count 1 --proc-stat " + NICER_TEST_DATA +
                              "/procstat/malformed-no-aggregate.txt");
    CHECK(r.exitCode == 1);
    CHECK_THAT(r.err, Catch::Contains("malformed-no-aggregate.txt has no aggregate 'cpu' line"));
}
