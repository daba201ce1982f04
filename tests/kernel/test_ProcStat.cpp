#include "kernel/ProcStat.h"

#include <catch2/catch.hpp>

#include <string>

using namespace nicer::kernel;

namespace {

std::string procStatFixture(const std::string& name) {
    return std::string(NICER_TEST_DATA) + "/procstat/" + name;
}

} // namespace

TEST_CASE("a full /proc/stat gives the aggregate and every per-CPU line with all ten fields", "[procstat]") {
    const auto snap = readProcStat(procStatFixture("four-cpus-t0.txt"));
    REQUIRE(snap.ok());
    CHECK(snap->aggregate == CpuTimes{1000, 200, 300, 4000, 100, 10, 20, 5, 50, 0});
    REQUIRE(snap->perCpu.size() == 4);
    CHECK(snap->perCpu.at(0) == CpuTimes{250, 50, 75, 1000, 25, 3, 5, 2, 10, 0});
    CHECK(snap->perCpu.at(3) == CpuTimes{250, 50, 75, 1000, 25, 2, 5, 1, 10, 0});
}

TEST_CASE("guest time is not counted twice in the total", "[procstat]") {
    const CpuTimes t{10, 20, 30, 40, 50, 60, 70, 80, 5, 6};
    CHECK(t.totalTime() == 10 + 20 + 30 + 40 + 50 + 60 + 70 + 80);
    CHECK(t.idleTime() == 40 + 50);
}

TEST_CASE("an old kernel's four-field lines parse with the missing fields as zero", "[procstat]") {
    const auto snap = readProcStat(procStatFixture("old-kernel-four-fields.txt"));
    REQUIRE(snap.ok());
    CHECK(snap->aggregate == CpuTimes{100, 0, 50, 850, 0, 0, 0, 0, 0, 0});
    CHECK(snap->perCpu.size() == 1);
}

TEST_CASE("fields beyond the ten known ones are ignored", "[procstat]") {
    const auto snap = readProcStat(procStatFixture("future-kernel-eleven-fields.txt"));
    REQUIRE(snap.ok());
    CHECK(snap->aggregate == CpuTimes{1000, 200, 300, 4000, 100, 10, 20, 5, 50, 0});
}

TEST_CASE("malformed /proc/stat files are rejected with the file, line and what is wrong", "[procstat]") {
    struct Case {
        const char* file;
        const char* expected;
    };
    const auto c =
        GENERATE(Case{"malformed-non-numeric.txt", "malformed-non-numeric.txt:3: field 2 of 'cpu1' is '1x0'"},
                 Case{"malformed-missing-fields.txt", ":2: 'cpu0' has 3 fields; at least 4"},
                 Case{"malformed-negative.txt", ":1: field 3 of 'cpu' is '-300'"},
                 Case{"malformed-no-aggregate.txt", "has no aggregate 'cpu' line"},
                 Case{"malformed-duplicate-cpu.txt", ":3: 'cpu0' appears twice"},
                 Case{"malformed-bad-label.txt", ":2: 'cpuX' is not a cpu line"});
    CAPTURE(c.file);
    const auto snap = readProcStat(procStatFixture(c.file));
    REQUIRE_FALSE(snap.ok());
    CHECK_THAT(snap.error().message, Catch::Contains(c.expected));
}

TEST_CASE("a counter too large for 64 bits is an error, not a wrap", "[procstat]") {
    const auto snap = parseProcStat("cpu  99999999999999999999 0 0 0\n");
    REQUIRE_FALSE(snap.ok());
    CHECK_THAT(snap.error().message, Catch::Contains("/proc/stat:1:"));
}

TEST_CASE("a missing file says which file could not be opened", "[procstat]") {
    const auto snap = readProcStat(procStatFixture("does-not-exist.txt"));
    REQUIRE_FALSE(snap.ok());
    CHECK_THAT(snap.error().message, Catch::Contains("cannot open") && Catch::Contains("does-not-exist.txt"));
}

TEST_CASE("the live /proc/stat parses and lists at least one CPU", "[procstat]") {
    const auto snap = readProcStat("/proc/stat");
    REQUIRE(snap.ok());
    CHECK_FALSE(snap->perCpu.empty());
    CHECK(snap->aggregate.totalTime() > 0);
}
