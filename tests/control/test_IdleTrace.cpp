#include "control/IdleTrace.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace nicer::control;

namespace {

nicer::Result<std::vector<double>> read(const std::string& text) {
    std::istringstream in(text);
    return readIdleTrace(in, "trace.txt");
}

} // namespace

TEST_CASE("one idle fraction per line, with blank lines and comments ignored", "[trace]") {
    const auto trace =
        read("# recorded on a laptop\n0.5\n\n  0.25  \n1 # inline comment\n0\r\n+0.75\n1e-1\n");
    REQUIRE(trace.ok());
    CHECK(*trace == std::vector<double>{0.5, 0.25, 1, 0, 0.75, 0.1});
}

TEST_CASE("a CSV's idle column is found by its header, in any position and case", "[trace]") {
    const auto trace = read("# comment first\nstep, \"IDLE\" ,multiplier\n0,0.5,1\n1, 0.25 ,2\n");
    REQUIRE(trace.ok());
    CHECK(*trace == std::vector<double>{0.5, 0.25});
}

TEST_CASE("a file with only a header or nothing at all is an empty trace", "[trace]") {
    CHECK(read("idle\n")->empty());
    CHECK(read("")->empty());
    CHECK(read("# nothing\n\n")->empty());
}

TEST_CASE("bad traces are rejected naming the file and line", "[trace]") {
    struct Case {
        const char* text;
        const char* expected;
    };
    const auto c = GENERATE(
        Case{"0.5\nabc\n", "trace.txt:2: 'abc' is not a number"},
        Case{"0.5\n\n1.01\n", "trace.txt:3: idle fraction 1.01 is outside 0..1"},
        Case{"-0.1\n", "trace.txt:1: idle fraction -0.1 is outside 0..1"},
        Case{"0.5\nnan\n", "trace.txt:2: idle fraction nan is outside 0..1"},
        Case{"0.5\ninf\n", "trace.txt:2: idle fraction inf is outside 0..1"},
        Case{"0.5\n0.1 0.2\n", "trace.txt:2: '0.1 0.2' is not a number"},
        Case{"0.5\n0.1,0.2\n", "trace.txt:2: '0.1,0.2' has commas, but the trace has no CSV header"},
        Case{"time,load\n1,2\n", "trace.txt:1: 'time,load' is neither an idle fraction nor a CSV header"},
        Case{"hello\n", "trace.txt:1: 'hello' is neither"},
        Case{"t,idle\n0,0.5\n1\n", "trace.txt:3: found 1 comma-separated fields, but the header has 2"},
        Case{"t,idle\n0,\n", "trace.txt:2: '' is not a number"});
    CAPTURE(c.text);
    const auto trace = read(c.text);
    REQUIRE_FALSE(trace.ok());
    CHECK_THAT(trace.error().message, Catch::Contains(c.expected));
}
