#include "control/ParameterTable.h"
#include "control/ParameterText.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace nicer::control;
using namespace std::chrono_literals;

namespace {

ControllerParams set(std::string_view key, std::string_view value) {
    ControllerParams p;
    const auto done = setParameterFromText(p, key, value);
    INFO((done ? std::string() : done.error().message));
    REQUIRE(done.ok());
    return p;
}

} // namespace

TEST_CASE("setParameterFromText sets every parameter from its text", "[ParameterText]") {
    CHECK(set("reserve-band", "0.1").reserveBand == 0.1);
    CHECK(set("min-multiplier", "2").minMultiplier == 2.0);
    CHECK(set("max-multiplier", "32.5").maxMultiplier == 32.5);
    CHECK(set("overload-threshold", "7").overloadThreshold == 7);
    CHECK(set("idle-epsilon", "0.05").idleEpsilon == 0.05);
    CHECK(set("reserve-band", "  0.2\t").reserveBand == 0.2);

    // The period is given in seconds and kept in milliseconds.
    CHECK(set("period", "1").period == 1000ms);
    CHECK(set("period", "0.25").period == 250ms);
    CHECK(set("period", "2.5").period == 2500ms);
    CHECK(set("period", "0.01").period == 10ms);

    // Only the named parameter changes.
    const auto p = set("overload-threshold", "9");
    ControllerParams expected;
    expected.overloadThreshold = 9;
    CHECK(p == expected);
}

TEST_CASE("setParameterFromText does not check ranges, so min and max can move together", "[ParameterText]") {
    ControllerParams p;
    REQUIRE(setParameterFromText(p, "min-multiplier", "40").ok());
    CHECK_FALSE(validate(p).ok()); // 40 > max 16 for now
    REQUIRE(setParameterFromText(p, "max-multiplier", "50").ok());
    CHECK(validate(p).ok());
}

TEST_CASE("setParameterFromText rejects an unknown key, listing the known ones", "[ParameterText]") {
    ControllerParams p;
    const auto unknown = setParameterFromText(p, "reserve_band", "0.1");
    REQUIRE_FALSE(unknown.ok());
    CHECK_THAT(unknown.error().message, Catch::Contains("'reserve_band'"));
    for (const auto& info : parameterTable()) {
        CHECK_THAT(unknown.error().message, Catch::Contains(std::string(info.key)));
    }
    CHECK(p == ControllerParams{});
}

TEST_CASE("setParameterFromText rejects a value that is not a number, naming the key", "[ParameterText]") {
    const auto key = GENERATE(as<std::string>{}, "reserve-band", "min-multiplier", "max-multiplier",
                              "overload-threshold", "idle-epsilon", "period");
    const auto value = GENERATE(as<std::string>{}, "abc", "", "0.1x", "1 2");
    ControllerParams p;
    const auto bad = setParameterFromText(p, key, value);
    INFO(key << " = '" << value << "'");
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains(key));
    CHECK(p == ControllerParams{});
}

TEST_CASE("setParameterFromText wants a whole number of periods and a sane period", "[ParameterText]") {
    ControllerParams p;
    const auto fraction = setParameterFromText(p, "overload-threshold", "2.5");
    REQUIRE_FALSE(fraction.ok());
    CHECK_THAT(fraction.error().message, Catch::Contains("overload-threshold") && Catch::Contains("whole"));
    const auto negative = setParameterFromText(p, "period", "-1");
    REQUIRE_FALSE(negative.ok());
    CHECK_THAT(negative.error().message, Catch::Contains("period"));
    CHECK_FALSE(setParameterFromText(p, "period", "inf").ok());
    CHECK_FALSE(setParameterFromText(p, "period", "nan").ok());
    CHECK(p == ControllerParams{});
}

TEST_CASE("writeParameterFile and readParameterFile round-trip exactly", "[ParameterText]") {
    ControllerParams p;
    SECTION("defaults") {}
    SECTION("values without an exact binary form") {
        p.reserveBand = 0.1;
        p.idleEpsilon = 0.05;
        p.minMultiplier = 1.1;
        p.maxMultiplier = 33.3;
        p.overloadThreshold = 0;
        p.period = 250ms;
    }
    SECTION("values whose shortest text is long") {
        p.reserveBand = 0.1 + 0.2; // 0.30000000000000004
        p.idleEpsilon = 1.0 / 3.0;
        p.minMultiplier = 1.0 + 1e-15;
        p.maxMultiplier = 64.0;
        p.overloadThreshold = 123;
        p.period = 10ms;
    }
    SECTION("the slowest period") {
        p.period = 10'000ms;
        p.idleEpsilon = 0.0;
    }
    REQUIRE(validate(p).ok());
    const std::string text = writeParameterFile(p);
    // Read over parameters that differ everywhere, so that each value must come from the text.
    ControllerParams other;
    other.reserveBand = 0.5;
    other.minMultiplier = 3;
    other.maxMultiplier = 5;
    other.overloadThreshold = 99;
    other.idleEpsilon = 0.4;
    other.period = 7ms;
    const auto read = readParameterFile(text, "params.conf", other);
    INFO(text);
    INFO((read ? std::string() : read.error().message));
    REQUIRE(read.ok());
    CHECK(*read == p);
    CHECK(writeParameterFile(*read) == text);
}

TEST_CASE("parametersAsText lists every key in order", "[ParameterText]") {
    const auto pairs = parametersAsText(ControllerParams{});
    REQUIRE(pairs.size() == parameterTable().size());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        CHECK(pairs[i].first == parameterTable()[i].key);
    }
    const auto period =
        std::find_if(pairs.begin(), pairs.end(), [](const auto& pair) { return pair.first == "period"; });
    REQUIRE(period != pairs.end());
    CHECK(period->second == "1"); // in seconds
    CHECK(pairs.back() == std::pair<std::string, std::string>{"transfer-hours", "any"});
}

TEST_CASE("readParameterFile skips comments and blank lines and keeps unset parameters", "[ParameterText]") {
    ControllerParams base;
    base.overloadThreshold = 6;
    const auto read = readParameterFile("# saved by nicerd\n\n  reserve-band = 0.1  # trailing note\r\n"
                                        "period=0.5\n\t\n",
                                        "params.conf", base);
    INFO((read ? std::string() : read.error().message));
    REQUIRE(read.ok());
    CHECK(read->reserveBand == 0.1);
    CHECK(read->period == 500ms);
    CHECK(read->overloadThreshold == 6);
    CHECK(read->maxMultiplier == ControllerParams{}.maxMultiplier);
}

TEST_CASE("readParameterFile errors name the source and the line", "[ParameterText]") {
    const std::string source = "/home/u/.local/state/nicer/params.conf";

    const auto noEquals = readParameterFile("# header\nreserve-band 0.1\n", source, {});
    REQUIRE_FALSE(noEquals.ok());
    CHECK_THAT(noEquals.error().message, Catch::StartsWith(source + ":2:") && Catch::Contains("key = value"));

    const auto unknown = readParameterFile("period = 1\n\nspeed = 3\n", source, {});
    REQUIRE_FALSE(unknown.ok());
    CHECK_THAT(unknown.error().message, Catch::StartsWith(source + ":3:") && Catch::Contains("'speed'"));

    const auto notNumber = readParameterFile("idle-epsilon = lots\n", source, {});
    REQUIRE_FALSE(notNumber.ok());
    CHECK_THAT(notNumber.error().message,
               Catch::StartsWith(source + ":1:") && Catch::Contains("idle-epsilon"));

    // Each line is fine on its own; together they are out of range, which only the file as a whole shows.
    const auto outOfRange = readParameterFile("reserve-band = 0.9\n", source, {});
    REQUIRE_FALSE(outOfRange.ok());
    CHECK_THAT(outOfRange.error().message,
               Catch::StartsWith(source + ": ") && Catch::Contains("reserve-band"));

    const auto crossed = readParameterFile("min-multiplier = 20\nmax-multiplier = 10\n", source, {});
    REQUIRE_FALSE(crossed.ok());
    CHECK_THAT(crossed.error().message,
               Catch::StartsWith(source + ": ") && Catch::Contains("min-multiplier"));

    const auto slowPeriod = readParameterFile("period = 60\n", source, {});
    REQUIRE_FALSE(slowPeriod.ok());
    CHECK_THAT(slowPeriod.error().message, Catch::StartsWith(source + ": ") && Catch::Contains("period"));
}

TEST_CASE("a saved parameter file cut short anywhere is refused, never read as other values",
          "[ParameterText][faults]") {
    ControllerParams saved;
    saved.reserveBand = 0.2;
    saved.minMultiplier = 2;
    saved.maxMultiplier = 12;
    saved.multiplierDecay = 0.5;
    saved.overloadThreshold = 7;
    saved.idleEpsilon = 0.01;
    saved.period = 250ms;
    const std::string text = writeParameterFile(saved);
    REQUIRE(readSavedParameterFile(text, "parameters.conf", {}).value() == saved);
    // Every length short of the whole file: nothing in between is read as a different setting.
    int refused = 0;
    for (std::size_t length = 0; length < text.size(); ++length) {
        const auto read = readSavedParameterFile(text.substr(0, length), "parameters.conf", {});
        INFO(length << ": '" << text.substr(0, length) << "'");
        if (read) {
            CHECK(*read == saved);
        } else {
            CHECK_THAT(read.error().message, Catch::StartsWith("parameters.conf"));
            ++refused;
        }
    }
    CHECK(refused == static_cast<int>(text.size()));
    CHECK_THAT(readSavedParameterFile("", "p.conf", {}).error().message, Catch::Contains("is empty"));
    CHECK_THAT(readSavedParameterFile(text.substr(0, text.size() - 2), "p.conf", {}).error().message,
               Catch::Contains("ends in the middle of a line"));
    CHECK_THAT(readSavedParameterFile("period = 1\n", "p.conf", {}).error().message,
               Catch::Contains("no line for reserve-band"));
}

TEST_CASE("a parameter file an older nicerd saved, without multiplier-decay, is read with its default",
          "[ParameterText]") {
    // What nicer before multiplier-decay wrote: the six other parameters.
    const std::string older =
        "# Controller parameters set at run time (nicer set, the tray). Written by nicerd.\n"
        "reserve-band = 0.2\nmin-multiplier = 2\nmax-multiplier = 12\n"
        "overload-threshold = 7\nidle-epsilon = 0.01\nperiod = 0.25\n";
    const auto read = readSavedParameterFile(older, "parameters.conf", {});
    REQUIRE(read.ok());
    CHECK(read->reserveBand == 0.2);
    CHECK(read->period == 250ms);
    CHECK(read->multiplierDecay == ControllerParams{}.multiplierDecay);
    // Only the newer parameter may be missing.
    const auto cut = readSavedParameterFile("reserve-band = 0.2\nmin-multiplier = 2\nmax-multiplier = 12\n"
                                            "multiplier-decay = 0.5\noverload-threshold = 7\nperiod = 0.25\n",
                                            "parameters.conf", {});
    REQUIRE_FALSE(cut.ok());
    CHECK_THAT(cut.error().message, Catch::Contains("no line for idle-epsilon"));
}

TEST_CASE("a saved parameter file with a line of garbage is refused with its line",
          "[ParameterText][faults]") {
    const std::string text = writeParameterFile(ControllerParams{});
    std::mt19937 random(12345);
    std::uniform_int_distribution<int> byte(0, 255);
    int refused = 0;
    int same = 0;
    int parameterLinesHit = 0;
    constexpr int kTries = 200;
    for (int i = 0; i < kTries; ++i) {
        // One line (of the header and the parameters) replaced by random bytes without a newline.
        std::vector<std::string> lines;
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
            lines.push_back(line);
        }
        const std::size_t at = random() % lines.size();
        const bool parameterLine = !lines[at].empty() && lines[at][0] != '#';
        parameterLinesHit += parameterLine ? 1 : 0;
        auto& victim = lines[at];
        victim.clear();
        for (int n = 1 + static_cast<int>(random() % 20); n > 0; --n) {
            const char c = static_cast<char>(byte(random));
            victim.push_back(c == '\n' ? ' ' : c);
        }
        std::string corrupt;
        for (const auto& line : lines) {
            corrupt += line + "\n";
        }
        INFO("line " << at + 1 << " replaced by garbage:\n" << corrupt);
        const auto read = readSavedParameterFile(corrupt, "parameters.conf", {});
        if (read) {
            // Only when the garbage took the header comment's place and reads as a blank or '#' line:
            // a parameter's line lost is always refused, since every parameter must have its line.
            CHECK_FALSE(parameterLine);
            CHECK(*read == ControllerParams{});
            ++same;
        } else {
            CHECK_THAT(read.error().message, Catch::StartsWith("parameters.conf"));
            ++refused;
        }
    }
    WARN("a line of garbage: " << refused << " of " << kTries << " refused, " << same
                               << " read the same values (the garbage replaced the comment)");
    // The seed makes the garbage hit parameter lines, the case that must always be refused.
    CHECK(parameterLinesHit > 0);
}
