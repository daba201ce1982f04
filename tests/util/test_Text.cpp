#include "util/Text.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace nicer;

TEST_CASE("trim drops spaces, tabs, CRs and LFs at both ends only", "[Text]") {
    CHECK(text::trim("  a b \t\r\n") == "a b");
    CHECK(text::trim("\n\tx") == "x");
    CHECK(text::trim("x") == "x");
    CHECK(text::trim(" \t\r\n ").empty());
    CHECK(text::trim("").empty());
    // Other whitespace is content.
    CHECK(text::trim("\va\f") == "\va\f");
}

TEST_CASE("nextToken walks words separated by spaces, tabs and CRs", "[Text]") {
    std::string_view rest = "  cpu0 12\t34 \r";
    CHECK(text::nextToken(rest) == "cpu0");
    CHECK(text::nextToken(rest) == "12");
    CHECK(text::nextToken(rest) == "34");
    CHECK(text::nextToken(rest).empty());
    CHECK(rest.empty());
    CHECK(text::nextToken(rest).empty());

    // A newline is not a separator: it stays in the word.
    std::string_view lines = "a\nb c";
    CHECK(text::nextToken(lines) == "a\nb");
    CHECK(lines == " c");
}

TEST_CASE("split keeps empty parts, including at the ends", "[Text]") {
    CHECK(text::split("a,,b", ',') == std::vector<std::string_view>{"a", "", "b"});
    CHECK(text::split(",a,", ',') == std::vector<std::string_view>{"", "a", ""});
    CHECK(text::split("abc", ',') == std::vector<std::string_view>{"abc"});
    CHECK(text::split("", ',') == std::vector<std::string_view>{""});
}

TEST_CASE("parseNumber takes all of the text as a number that fits, or nothing", "[Text]") {
    std::uint16_t port = 7;
    CHECK(text::parseNumber("65535", port));
    CHECK(port == 65535);
    CHECK_FALSE(text::parseNumber("65536", port));
    CHECK_FALSE(text::parseNumber("", port));
    CHECK_FALSE(text::parseNumber("-1", port));
    CHECK_FALSE(text::parseNumber("+1", port));
    CHECK_FALSE(text::parseNumber(" 1", port));
    CHECK_FALSE(text::parseNumber("1 ", port));
    CHECK_FALSE(text::parseNumber("1x", port));
    CHECK_FALSE(text::parseNumber("0x10", port));

    int negative = 0;
    CHECK(text::parseNumber("-42", negative));
    CHECK(negative == -42);

    std::uint64_t big = 0;
    CHECK(text::parseNumber("18446744073709551615", big));
    CHECK(big == UINT64_MAX);
    CHECK_FALSE(text::parseNumber("18446744073709551616", big));

    double fraction = 0.0;
    CHECK(text::parseNumber("0.25", fraction));
    CHECK(fraction == 0.25);
    CHECK_FALSE(text::parseNumber("0.25.", fraction));
}

TEST_CASE("toLowerAscii lowers A-Z and leaves every other byte alone", "[Text]") {
    CHECK(text::toLowerAscii("Content-Type: HTTPS") == "content-type: https");
    CHECK(text::toLowerAscii("az09-_.@[`{") == "az09-_.@[`{");
    // UTF-8 is not touched, so 'É' stays as it is, as do bytes that are not text.
    CHECK(text::toLowerAscii("\xc3\x89T\xff") == "\xc3\x89t\xff");
    CHECK(text::toLowerAscii(std::string_view("A\0B", 3)) == std::string("a\0b", 3));
    CHECK(text::toLowerAscii("").empty());
}

TEST_CASE("humanBytes counts in 1024s with one decimal above bytes", "[Text]") {
    CHECK(nicer::text::humanBytes(0) == "0 B");
    CHECK(nicer::text::humanBytes(1023) == "1023 B");
    CHECK(nicer::text::humanBytes(1536) == "1.5 KiB");
    CHECK(nicer::text::humanBytes(4.0 * 1024 * 1024 * 1024) == "4.0 GiB");
    CHECK(nicer::text::humanBytes(3.0 * 1024 * 1024 * 1024 * 1024 * 1024) ==
          "3072.0 TiB"); // no unit above TiB
}

TEST_CASE("lowerHex writes two lower-case digits per byte, leading zeros kept", "[Text]") {
    const std::vector<unsigned char> bytes{0x00, 0x0f, 0xa5, 0xff, 0x10};
    CHECK(nicer::text::lowerHex(bytes) == "000fa5ff10");
    CHECK(nicer::text::lowerHex({}).empty());
}
