#include "desktop/ProgramList.h"

#include <catch2/catch.hpp>

using namespace nicer;
using desktop::ProgramListEdit;
using Names = std::vector<std::string>;

TEST_CASE("the program list file reads back what nicerd wrote, an empty list included", "[ProgramList]") {
    for (const auto& names : {Names{"blender", "steam", "x-plane.bin"}, Names{}}) {
        const auto text = desktop::writeProgramListFile(names);
        const auto read = desktop::readProgramListFile(text, "programs.conf");
        REQUIRE(read.ok());
        CHECK(*read == names);
    }
    CHECK(*desktop::readProgramListFile("# mine\n\n  programs =  a\tb  \n", "f") == Names{"a", "b"});
}

TEST_CASE("a program list file that nicerd did not write whole is refused, naming the file and the line",
          "[ProgramList]") {
    const auto refused = [](const std::string& text) {
        const auto read = desktop::readProgramListFile(text, "/state/programs.conf");
        REQUIRE_FALSE(read.ok());
        return read.error().message;
    };
    CHECK_THAT(refused("programs = blender"),
               Catch::Contains("/state/programs.conf") && Catch::Contains("cut short"));
    CHECK_THAT(refused(""), Catch::Contains("cut short"));
    CHECK_THAT(refused("# only a comment\n"), Catch::Contains("no 'programs = NAME ...' line"));
    CHECK_THAT(refused("programs = a\nprograms = b\n"),
               Catch::Contains("/state/programs.conf:2: a second 'programs' line"));
    CHECK_THAT(refused("preset = demo\n"), Catch::Contains("/state/programs.conf:1: unknown key 'preset'"));
    CHECK_THAT(refused("programs = gimp /usr/bin/blender\n"),
               Catch::Contains("'/usr/bin/blender' is a path") && Catch::Contains("(blender)"));
}

TEST_CASE("checking a list keeps each name once, in the order given, and names the first bad one",
          "[ProgramList]") {
    CHECK(*desktop::checkProgramList({"b", "a", "b"}) == Names{"b", "a"});
    const auto bad = desktop::checkProgramList({"a", "blender --background", "c#"});
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains("'blender --background' holds a space"));
    CHECK_THAT(desktop::checkProgramList({"c#"}).error().message, Catch::Contains("holds a '#'"));
}

TEST_CASE("the list is changed by adding, removing or replacing names", "[ProgramList]") {
    const Names current{"blender", "gimp"};
    CHECK(*desktop::editProgramList(current, ProgramListEdit::Add, {"steam", "gimp"}) ==
          Names{"blender", "gimp", "steam"});
    CHECK(*desktop::editProgramList(current, ProgramListEdit::Remove, {"blender"}) == Names{"gimp"});
    CHECK(*desktop::editProgramList(current, ProgramListEdit::Replace, {"x"}) == Names{"x"});
    CHECK(desktop::editProgramList(current, ProgramListEdit::Replace, {})->empty());

    SECTION("removing a name that is not there is an error that shows the list") {
        const auto typo = desktop::editProgramList(current, ProgramListEdit::Remove, {"blendr"});
        REQUIRE_FALSE(typo.ok());
        CHECK(typo.error().message == "'blendr' is not among the named programs (blender gimp)");
        CHECK(desktop::editProgramList({}, ProgramListEdit::Remove, {"a"}).error().message ==
              "'a' is not among the named programs (there are none)");
    }
    SECTION("a bad name changes nothing") {
        CHECK_FALSE(desktop::editProgramList(current, ProgramListEdit::Add, {"ok", "/bin/sh"}).ok());
    }
}
