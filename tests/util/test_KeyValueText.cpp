#include "util/KeyValueText.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace nicer;

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Result<void> collect(std::string_view text, Pairs& pairs) {
    return text::forEachKeyValueLine(text, "state.conf", "key = value", [&](const text::KeyValueLine& line) {
        pairs.emplace_back(line.key, line.value);
        return Result<void>{};
    });
}

} // namespace

TEST_CASE("forEachKeyValueLine gives trimmed keys and values in order", "[KeyValueText]") {
    Pairs pairs;
    REQUIRE(collect("a = 1\n  b=two words  \r\nc =\n", pairs).ok());
    CHECK(pairs == Pairs{{"a", "1"}, {"b", "two words"}, {"c", ""}});
}

TEST_CASE("forEachKeyValueLine skips blank lines and comments, and splits at the first '='",
          "[KeyValueText]") {
    Pairs pairs;
    REQUIRE(collect("# header\n\n   \nx = 1 # why\n#y = 2\nz = a=b\n", pairs).ok());
    CHECK(pairs == Pairs{{"x", "1"}, {"z", "a=b"}});

    Pairs none;
    REQUIRE(collect("", none).ok());
    CHECK(none.empty());
}

TEST_CASE("forEachKeyValueLine names the source and line of a line without '='", "[KeyValueText]") {
    Pairs pairs;
    const auto result = collect("a = 1\n\n  oops  \nb = 2\n", pairs);
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().message == "state.conf:3: expected 'key = value', found 'oops'");
    CHECK(pairs == Pairs{{"a", "1"}}); // it stopped there
}

TEST_CASE("forEachKeyValueLine puts the place in front of the caller's error and stops", "[KeyValueText]") {
    int calls = 0;
    const auto result = text::forEachKeyValueLine("a = 1\nb = x\nc = 3\n", "f", "k = v",
                                                  [&](const text::KeyValueLine& line) -> Result<void> {
                                                      ++calls;
                                                      if (line.value == "x") {
                                                          return Error{"'x' is not a number"};
                                                      }
                                                      return {};
                                                  });
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().message == "f:2: 'x' is not a number");
    CHECK(calls == 2);
}

TEST_CASE("requireWholeLines refuses an empty file and one whose last line has no newline",
          "[KeyValueText]") {
    CHECK(nicer::text::requireWholeLines("a = 1\n", "f").ok());
    CHECK(nicer::text::requireWholeLines("\n", "f").ok());
    CHECK_THAT(nicer::text::requireWholeLines("", "f").error().message, Catch::Contains("f is empty"));
    CHECK_THAT(nicer::text::requireWholeLines("a = 1\nb = 2", "f").error().message,
               Catch::Contains("f ends in the middle of a line"));
}
