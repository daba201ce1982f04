#include "workload/PresetFile.h"

#include <catch2/catch.hpp>

#include <string>

using nicer::workload::readPresetFile;
using nicer::workload::writePresetFile;

TEST_CASE("the workload file reads back every id written to it", "[PresetFile]") {
    for (const std::string id : {"demo", "boinc", "folding", "custom"}) {
        CAPTURE(id);
        const auto read = readPresetFile(writePresetFile(id), "workload.conf");
        REQUIRE(read.ok());
        CHECK(*read == id);
    }
}

TEST_CASE("the workload file takes comments, blank lines and spaces", "[PresetFile]") {
    const auto read =
        readPresetFile("# chosen in the tray\n\n   preset=folding   # for science\r\n", "w.conf");
    REQUIRE(read.ok());
    CHECK(*read == "folding");
}

TEST_CASE("a bad workload file is refused with its name, the line and what is wrong", "[PresetFile]") {
    struct Case {
        const char* text;
        const char* expected;
    };
    const auto c =
        GENERATE(Case{"# x\npreset = seti\n", "/state/workload.conf:2: preset = 'seti' is unknown: the "
                                              "workloads are demo, boinc, folding or custom"},
                 Case{"preset = \n", "/state/workload.conf:1: preset = '' is unknown"},
                 Case{"workload = boinc\n", "/state/workload.conf:1: unknown key 'workload'"},
                 Case{"boinc\n", "/state/workload.conf:1: expected 'preset = ID', found 'boinc'"},
                 Case{"# only a comment\n", "/state/workload.conf: no 'preset = ID' line"},
                 Case{"", "/state/workload.conf is empty, but nicerd never writes it empty"});
    CAPTURE(c.text);
    const auto read = readPresetFile(c.text, "/state/workload.conf");
    REQUIRE_FALSE(read.ok());
    CHECK_THAT(read.error().message, Catch::StartsWith(c.expected));
}

TEST_CASE("a workload file cut short anywhere is refused, never read as another preset",
          "[PresetFile][faults]") {
    const std::string text = writePresetFile("boinc");
    for (std::size_t length = 0; length < text.size(); ++length) {
        INFO(length);
        const auto read = readPresetFile(text.substr(0, length), "workload.conf");
        REQUIRE_FALSE(read.ok());
        CHECK_THAT(read.error().message, Catch::StartsWith("workload.conf"));
    }
    CHECK(readPresetFile(text, "workload.conf").value() == "boinc");
}
