#include "util/Result.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

using namespace nicer;

TEST_CASE("Result holds a value or the error that says why there is none", "[Result]") {
    Result<std::string> good = std::string("value");
    REQUIRE(good.ok());
    CHECK(static_cast<bool>(good));
    CHECK(*good == "value");
    CHECK(good->size() == 5);

    const Result<std::string> bad = Error{"cannot open x: denied"};
    CHECK_FALSE(bad.ok());
    CHECK_FALSE(static_cast<bool>(bad));
    CHECK(bad.error().message == "cannot open x: denied");
    CHECK_THROWS(bad.value()); // asking a failure for its value is a bug, not a silent default
}

TEST_CASE("Result gives up a value that can only move", "[Result]") {
    Result<std::unique_ptr<int>> held = std::make_unique<int>(7);
    REQUIRE(held.ok());
    const auto taken = std::move(held).value();
    REQUIRE(taken != nullptr);
    CHECK(*taken == 7);
}

TEST_CASE("Result<void> is success by default and carries an error otherwise", "[Result]") {
    const Result<void> done;
    CHECK(done.ok());
    const Result<void> failed = Error{"no"};
    CHECK_FALSE(failed.ok());
    CHECK(failed.error().message == "no");
}

TEST_CASE("an Error is a failure unless its kind says otherwise, and keeps its kind within a context",
          "[Result]") {
    CHECK(Error{"disk full"}.kind == ErrorKind::Failed);
    const Error bad{"'a b' holds a space", ErrorKind::InvalidInput};
    const Error within = bad.within("the named programs were not changed: ");
    CHECK(within.message == "the named programs were not changed: 'a b' holds a space");
    CHECK(within.kind == ErrorKind::InvalidInput);
}
