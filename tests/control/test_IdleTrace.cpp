#include "control/IdleTrace.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace nicer::control;

namespace {

nicer::Result<std::vector<TracePeriod>> readPeriods(const std::string& text) {
    std::istringstream in(text);
    return readTrace(in, "trace.txt");
}

/// The idle column alone, for the cases about the thesis's signal.
nicer::Result<std::vector<double>> read(const std::string& text) {
    auto periods = readPeriods(text);
    if (!periods) {
        return periods.error();
    }
    std::vector<double> idle;
    for (const auto& p : *periods) {
        CHECK_FALSE(p.work.has_value());
        CHECK_FALSE(p.outside.has_value());
        idle.push_back(p.idle);
    }
    return idle;
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
        Case{"t,idle\n0,\n", "trace.txt:2: '' is not a number"},
        Case{"idle,work\n0.5,0.5\n", "trace.txt:1: 'idle,work' has a 'work' column but no 'outside' one"},
        Case{"idle,outside\n0.5,0.5\n",
             "trace.txt:1: 'idle,outside' has an 'outside' column but no 'work' one"},
        Case{"idle,work,outside\n0.5,0.5,1.5\n", "trace.txt:2: outside share 1.5 is outside 0..1"},
        Case{"idle,work,outside\n0,x,0\n", "trace.txt:2: 'x' is not a number; each work's share"},
        Case{"idle,work,outside\n0,0.75,0.5\n", "trace.txt:2: the work's share 0.75 and the outside share "
                                                "0.5 add up to more than the whole machine"},
        Case{"idle,work,outside,signal\n0,0,0,auto\n",
             "trace.txt:2: 'auto' is not a signal; each period's is machine or outside"},
        Case{"idle,signal\n0,thesis\n", "trace.txt:2: 'thesis' is not a signal"},
        Case{
            "idle,signal\n0,machine\n0,outside\n",
            "trace.txt:3: the period answered the outside signal, but the trace has no 'work' and 'outside'"},
        Case{"idle,paused\n0,yes\n", "trace.txt:2: 'yes' is not a paused flag; each period's is 0 or 1"},
        Case{"idle,temperature\n0,hot\n",
             "trace.txt:2: 'hot' is not a temperature; each period's is in °C, or empty without a sensor"},
        Case{"idle,temperature\n0,inf\n", "trace.txt:2: 'inf' is not a temperature"});
    CAPTURE(c.text);
    const auto trace = read(c.text);
    REQUIRE_FALSE(trace.ok());
    CHECK_THAT(trace.error().message, Catch::Contains(c.expected));
}

TEST_CASE("a CSV with work and outside columns carries the split signal", "[trace][outside]") {
    const auto trace = readPeriods("step,idle,background,outside,quota\n0,0.25,0.5,0.125,1\n1,0,0,1,0\n");
    REQUIRE(trace.ok());
    REQUIRE(trace->size() == 2);
    CHECK((*trace)[0].idle == 0.25);
    CHECK((*trace)[0].work == 0.5);
    CHECK((*trace)[0].outside == 0.125);
    CHECK((*trace)[1].work == 0.0);
    CHECK((*trace)[1].outside == 1.0);
    // The names nicer simulate writes, in any case.
    const auto simulated = readPeriods("Step,Idle,Work,Outside\n0,0.5,0.25,0.25\n");
    REQUIRE(simulated.ok());
    CHECK(simulated->at(0).work == 0.25);
}

TEST_CASE("a trace's signal and paused columns are read period by period", "[trace][outside]") {
    const auto trace = readPeriods("time,idle,work,outside,signal,paused,quota\n"
                                   "2026-11-27T16:00:00.000Z,0.5,0.25,0,machine,0,1\n"
                                   "2026-11-27T16:00:01.000Z,0.5,0.25,0,Outside,1,0\n"
                                   "2026-11-27T16:00:02.000Z,0.5,0.25,0,outside,true,0\n");
    REQUIRE(trace.ok());
    REQUIRE(trace->size() == 3);
    CHECK((*trace)[0].signal == Signal::Machine);
    CHECK((*trace)[0].paused == false);
    CHECK((*trace)[1].signal == Signal::Outside);
    CHECK((*trace)[1].paused == true);
    CHECK((*trace)[2].paused == true);
    // Without the columns neither is known: the replay chooses.
    const auto plain = readPeriods("idle\n0.5\n");
    REQUIRE(plain.ok());
    CHECK_FALSE(plain->at(0).signal.has_value());
    CHECK_FALSE(plain->at(0).paused.has_value());
}

TEST_CASE("a trace's temperature column is read period by period, empty where there was no sensor",
          "[trace]") {
    const auto trace = readPeriods("time,idle,signal,paused,temperature,quota\n"
                                   "2026-11-27T16:00:00.000Z,0.5,machine,0,71.5,1\n"
                                   "2026-11-27T16:00:01.000Z,0.5,machine,0,,1\n"
                                   "2026-11-27T16:00:02.000Z,0.5,machine,0,-3,1\n");
    REQUIRE(trace.ok());
    REQUIRE(trace->size() == 3);
    CHECK((*trace)[0].temperature == 71.5);
    CHECK_FALSE((*trace)[1].temperature.has_value());
    CHECK((*trace)[2].temperature == -3.0);
    CHECK_FALSE(readPeriods("idle\n0.5\n")->at(0).temperature.has_value());
}

TEST_CASE("a trace's presence column gives each period's profile, and a word it does not know is refused",
          "[trace]") {
    const auto trace = readPeriods("idle,presence\n0.5,here\n0.5,Away\n0.5,unknown\n");
    REQUIRE(trace.ok());
    REQUIRE(trace->size() == 3);
    CHECK((*trace)[0].presence == Presence::Here);
    CHECK((*trace)[1].presence == Presence::Away);
    CHECK((*trace)[2].presence == Presence::Unknown);
    CHECK_FALSE(readPeriods("idle\n0.5\n")->at(0).presence.has_value());
    const auto wrong = readPeriods("idle,presence\n0.5,asleep\n");
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.error().message ==
          "trace.txt:2: 'asleep' is not a presence; each period's is here, away or unknown");
}
