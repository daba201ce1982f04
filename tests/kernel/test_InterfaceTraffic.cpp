#include "kernel/InterfaceTraffic.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

using namespace nicer::kernel;

namespace {

std::string fixture(const std::string& name) {
    return std::string(NICER_TEST_DATA) + "/netdev/" + name;
}

} // namespace

TEST_CASE("/proc/net/dev gives every interface's received and sent bytes in file order", "[netdev]") {
    const auto interfaces = readNetDev(fixture("typical.txt"));
    REQUIRE(interfaces.ok());
    REQUIRE(interfaces->size() == 3);
    CHECK((*interfaces)[0] == InterfaceTraffic{"lo", 2037750, 2037750});
    CHECK((*interfaces)[1] == InterfaceTraffic{"eth0", 67689425, 74734});
    CHECK((*interfaces)[2] == InterfaceTraffic{"wlan0", 1000000, 500000});
}

TEST_CASE("the received total leaves loopback out unless asked to include it", "[netdev]") {
    CHECK(totalReceivedBytes(fixture("typical.txt")).value() == 67689425u + 1000000u);
    CHECK(totalReceivedBytes(fixture("typical.txt"), Loopback::Include).value() ==
          2037750u + 67689425u + 1000000u);
    CHECK(totalReceivedBytes(fixture("loopback-only.txt")).value() == 0);
}

TEST_CASE("a counter glued to the colon and a full 64-bit counter parse", "[netdev]") {
    const auto interfaces = readNetDev(fixture("no-space-after-colon.txt"));
    REQUIRE(interfaces.ok());
    REQUIRE(interfaces->size() == 2);
    CHECK((*interfaces)[1].name == "eth0");
    CHECK((*interfaces)[1].receivedBytes == std::numeric_limits<std::uint64_t>::max());
    CHECK((*interfaces)[1].sentBytes == 74734);
}

TEST_CASE("parsing text works without a file and names the given source in errors", "[netdev]") {
    const auto ok = parseNetDev("Inter-| Receive | Transmit\n"
                                " face |bytes|bytes\n"
                                "eth0: 10 0 0 0 0 0 0 0 20 0 0 0 0 0 0 0\n");
    REQUIRE(ok.ok());
    CHECK(ok->at(0) == InterfaceTraffic{"eth0", 10, 20});

    const auto bad = parseNetDev("Inter-|\neth0: 1 2\n", "snapshot");
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message, Catch::StartsWith("snapshot:2: 'eth0' has 2 counters"));
}

TEST_CASE("malformed /proc/net/dev files are rejected with the file, line and what is wrong", "[netdev]") {
    struct Case {
        const char* file;
        const char* expected;
    };
    const auto c = GENERATE(
        Case{"malformed-non-numeric.txt",
             "malformed-non-numeric.txt:3: field 2 of 'eth0' is '15x1', not a counter"},
        Case{"malformed-negative.txt", ":3: field 1 of 'eth0' is '-5'"},
        Case{"malformed-missing-fields.txt", ":3: 'eth0' has 4 counters; at least 9"},
        Case{"malformed-duplicate.txt", ":4: interface 'eth0' appears twice"},
        Case{"malformed-not-netdev.txt", ":1: 'cpu  1000 200 300 4000 100 10 20 5 50 0' is neither a header"},
        Case{"malformed-no-header.txt", "has no 'Inter-|' header: is this really /proc/net/dev?"},
        Case{"empty.txt", "has no 'Inter-|' header"});
    CAPTURE(c.file);
    const auto interfaces = readNetDev(fixture(c.file));
    REQUIRE_FALSE(interfaces.ok());
    CHECK_THAT(interfaces.error().message, Catch::Contains(c.expected));
}

TEST_CASE("a missing file is an error that names it", "[netdev]") {
    const auto total = totalReceivedBytes(fixture("does-not-exist.txt"));
    REQUIRE_FALSE(total.ok());
    CHECK_THAT(total.error().message, Catch::Contains("does-not-exist.txt"));
}

TEST_CASE("counter deltas between two reads never go negative", "[netdev]") {
    const auto t0 = totalReceivedBytes(fixture("typical.txt")).value();
    const auto t1 = totalReceivedBytes(fixture("typical-later.txt")).value();
    const auto wrapped = totalReceivedBytes(fixture("wrapped.txt")).value();

    CHECK(counterDelta(t0, t1) == 2000000u + 500000u);
    // eth0 wrapped and wlan0 vanished: the sum fell, which must read as "nothing received", not 2^64 - x.
    CHECK(wrapped < t1);
    CHECK(counterDelta(t1, wrapped) == 0);
    CHECK(counterDelta(5, 5) == 0);
    CHECK(counterDelta(0, std::numeric_limits<std::uint64_t>::max()) ==
          std::numeric_limits<std::uint64_t>::max());
    static_assert(counterDelta(10, 3) == 0);
}
