#include "util/UniqueFd.h"
#include "workload/BoincCommand.h"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

using nicer::workload::BoincClientCommand;
using nicer::workload::boincClientOf;
using nicer::workload::chooseBoincRpcPort;

TEST_CASE("boincClientOf() finds the BOINC client in a command, behind wrappers too", "[BoincCommand]") {
    using Argv = std::vector<std::string>;
    struct Case {
        Argv argv;
        BoincClientCommand expected;
    };
    for (const auto& c : {
             Case{{"boinc", "--dir", "/d", "--gui_rpc_port", "31500"}, {"/d", 31500}},
             Case{{"/usr/bin/boinc", "-dir", "/d"}, {"/d", 31416}},
             Case{{"nice", "-n", "19", "boinc", "--gui_rpc_port", "1", "--dir", "/x/y"}, {"/x/y", 1}},
             Case{{"ip", "netns", "exec", "ns", "boinc", "--dir", "/d", "--skip_cpu_benchmarks"},
                  {"/d", 31416}},
         }) {
        INFO(c.argv.front());
        const auto client = boincClientOf(c.argv);
        REQUIRE(client.ok());
        REQUIRE(client->has_value());
        CHECK(**client == c.expected);
    }
    // Not the client: no argument is named boinc (boinccmd is the client's tool, not the client).
    for (const auto& argv :
         {Argv{"md5sum", "/dev/zero"}, Argv{"boinccmd", "--dir", "/d"}, Argv{"FAHClient"}}) {
        const auto client = boincClientOf(argv);
        REQUIRE(client.ok());
        CHECK_FALSE(client->has_value());
    }
}

TEST_CASE("boincClientOf() refuses a client it could not govern, and says why", "[BoincCommand]") {
    const auto noDir = boincClientOf({"boinc", "--gui_rpc_port", "31500"});
    REQUIRE_FALSE(noDir.ok());
    CHECK_THAT(noDir.error().message,
               Catch::Contains("without --dir") && Catch::Contains("gui_rpc_auth.cfg"));
    for (const std::string port : {"x", "0", "65536", "314a", ""}) {
        const auto bad = boincClientOf({"boinc", "--dir", "/d", "--gui_rpc_port", port});
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().message ==
              "the BOINC client's --gui_rpc_port '" + port + "' is not a port (1..65535)");
    }
}

TEST_CASE("chooseBoincRpcPort() keeps the preferred port while it is free, else takes a free one",
          "[BoincCommand]") {
    // Hold a port: it must not be chosen.
    const nicer::UniqueFd held(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(held);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(held.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(held.get(), 1) == 0);
    socklen_t length = sizeof addr;
    REQUIRE(::getsockname(held.get(), reinterpret_cast<sockaddr*>(&addr), &length) == 0);
    const int taken = ntohs(addr.sin_port);

    const int chosen = chooseBoincRpcPort(taken);
    CHECK(chosen != taken);
    CHECK(chosen > 0);
    // A free one is kept: the port just chosen is free again (nothing holds it).
    CHECK(chooseBoincRpcPort(chosen) == chosen);
}
