#include "daemon/BoincArguments.h"

#include <catch2/catch.hpp>

using namespace nicer;

TEST_CASE("BOINC's project URL and account key: http(s), printable, no blanks, at most 255 bytes",
          "[BoincArguments]") {
    CHECK(daemon::checkBoincAttach("https://einstein.phys.uwm.edu/", "0123abcd").ok());
    CHECK(daemon::checkBoincProjectUrl("http://localhost:8080/test/").ok());
    CHECK_THAT(daemon::checkBoincProjectUrl("ftp://example.org/").error().message,
               Catch::Contains("must start with http:// or https://"));
    CHECK_THAT(daemon::checkBoincProjectUrl("").error().message, Catch::Contains("is empty"));
    CHECK_THAT(daemon::checkBoincProjectUrl("https://" + std::string(250, 'a')).error().message,
               Catch::Contains("255 characters"));
    CHECK_THAT(daemon::checkBoincAttach("https://example.org/", "key with space").error().message,
               Catch::Contains("account key holds a blank or a control character"));
    CHECK_THAT(daemon::checkBoincAttach("https://example.org/\x03", "key").error().message,
               Catch::Contains("project URL holds a blank or a control character"));
}

TEST_CASE("an account manager's user name and password may not end the GUI RPC request early",
          "[BoincArguments]") {
    // Found by tests/fuzz/fuzz_DbusArguments: a \003 in the name or password went into the request as it was,
    // so BOINC read two requests and answered twice, and every later reply went to the wrong call.
    CHECK(
        daemon::checkBoincAccountManager("https://bam.boincstats.com/", "me", "p&ss\"word with spaces").ok());
    CHECK(daemon::checkBoincAccountManager("https://bam.boincstats.com/", "first last", "").ok());
    CHECK_THAT(daemon::checkBoincAccountManager("https://bam.boincstats.com/", "me",
                                                "pw\x03<boinc_gui_rpc_request><quit/>")
                   .error()
                   .message,
               Catch::Contains("password holds a control character"));
    CHECK_THAT(
        daemon::checkBoincAccountManager("https://bam.boincstats.com/", "me\r\n", "pw").error().message,
        Catch::Contains("user name holds a control character"));
    CHECK_THAT(daemon::checkBoincAccountManager("https://bam.boincstats.com/", "", "pw").error().message,
               Catch::Contains("1 to 255 characters"));
    CHECK_THAT(daemon::checkBoincAccountManager("bam.boincstats.com", "me", "pw").error().message,
               Catch::StartsWith("account manager: "));
}
