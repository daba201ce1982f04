#include "util/ByteSize.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

using nicer::text::byteUnitFactor;
using nicer::text::parseByteSize;

TEST_CASE("every unit CLI11's AsSizeValue took has its 1024-based factor, in any case", "[ByteSize]") {
    CHECK(byteUnitFactor("b") == 1u);
    CHECK(byteUnitFactor("B") == 1u);
    std::uint64_t factor = 1;
    for (const std::string prefix : {"k", "m", "g", "t", "p", "e"}) {
        factor *= 1024;
        for (const std::string suffix : {"", "b", "i", "ib", "B", "iB", "IB"}) {
            INFO(prefix + suffix);
            CHECK(byteUnitFactor(prefix + suffix) == factor);
            std::string upper = prefix + suffix;
            upper[0] = static_cast<char>(upper[0] - 'a' + 'A');
            CHECK(byteUnitFactor(upper) == factor);
        }
    }
    CHECK(factor == 1152921504606846976u); // e: 1024^6
    for (const char* unknown : {"", "x", "kk", "bi", "ibk", "z", "zb", "kib ", "mbi"}) {
        INFO(unknown);
        CHECK_FALSE(byteUnitFactor(unknown));
    }
}

TEST_CASE("parseByteSize reads a decimal number with an optional unit", "[ByteSize]") {
    CHECK(*parseByteSize("250000") == 250000.0);
    CHECK(*parseByteSize("0") == 0.0);
    CHECK(*parseByteSize("0.5") == 0.5);
    CHECK(*parseByteSize("500k") == 512000.0);
    CHECK(*parseByteSize("10M") == 10485760.0);
    CHECK(*parseByteSize("1.5GiB") == 1610612736.0);
    CHECK(*parseByteSize("64KB") == 65536.0);
    CHECK(*parseByteSize("100B") == 100.0);
    CHECK(*parseByteSize(".5k") == 512.0);
    CHECK(*parseByteSize("2e") == 2305843009213693952.0);
}

TEST_CASE("parseByteSize refuses what is not a size, naming the text and the accepted form", "[ByteSize]") {
    for (const char* bad : {"", "k", "-1", "10X", "1..5", "10 M", " 10M", "M10", "10Mx", "1e6", "10iB",
                            "0x10", "+5", "5k ", "inf", "nan", "1,5M"}) {
        INFO(bad);
        const auto parsed = parseByteSize(bad);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message,
                   Catch::StartsWith("'" + std::string(bad) + "' is not a size in bytes"));
        CHECK_THAT(parsed.error().message, Catch::Contains("e.g. 500k or 1.5M"));
    }
}
