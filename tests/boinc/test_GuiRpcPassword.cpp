#include "TempDir.h"
#include "boinc/GuiRpcPassword.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace nicer;
using namespace nicer::boinc;

namespace {

using test::TempDir;

} // namespace

TEST_CASE("the password is the first line of gui_rpc_auth.cfg without white space", "[GuiRpcPassword]") {
    const TempDir dir;
    const auto file = dir.path / "gui_rpc_auth.cfg";

    std::ofstream(file) << "01ebc02d76430896d82f08c8a96adee"; // as the client writes it: no newline
    CHECK(readGuiRpcPassword(file).value() == "01ebc02d76430896d82f08c8a96adee");

    std::ofstream(file) << "  secret \t\r\nsecond line\n";
    CHECK(readGuiRpcPassword(file).value() == "secret");

    std::ofstream(file) << "\n";
    CHECK(readGuiRpcPassword(file).value().empty()); // the client then lets any local program in
}

TEST_CASE("a missing password file is an error that names it", "[GuiRpcPassword]") {
    const TempDir dir;
    const auto missing = readGuiRpcPassword(dir.path / "gui_rpc_auth.cfg");
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(missing.error().message,
               Catch::StartsWith("cannot read BOINC's GUI RPC password: cannot open "));
    CHECK_THAT(missing.error().message, Catch::Contains((dir.path / "gui_rpc_auth.cfg").string()));
    CHECK_THAT(missing.error().message, Catch::Contains("when it first starts"));

    const auto directory = readGuiRpcPassword(dir.path);
    REQUIRE_FALSE(directory.ok());
}
