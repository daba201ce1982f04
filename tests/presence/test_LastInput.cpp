// The last input's wall-clock time as published for BOINC: from the source's own count where it has one, now
// while here, and the away delay before the verdict turned away, growing while away.
#include "presence/LastInput.h"

#include <catch2/catch.hpp>

using namespace nicer;
using namespace std::chrono_literals;
using control::Presence;

namespace {

presence::PresenceVerdict verdict(Presence presence, std::optional<std::chrono::milliseconds> since = {}) {
    return {presence, "a source", "a reason", since};
}

} // namespace

TEST_CASE("the last input is the source's own count where it has one") {
    presence::LastInput last;
    const wallclock::TimePoint t0{std::chrono::seconds(1'800'000'000)};
    CHECK(last.update(verdict(Presence::Here, 5s), t0, 180s) == t0 - 5s);
    CHECK(last.update(verdict(Presence::Away, 200s), t0 + 20s, 180s) == t0 - 180s);
    CHECK(last.update(verdict(Presence::Away, 210s), t0 + 30s, 180s) == t0 - 180s);
}

TEST_CASE("without a count, here is input now and away is the delay before the verdict, then it grows") {
    presence::LastInput last;
    const wallclock::TimePoint t0{std::chrono::seconds(1'800'000'000)};
    CHECK(last.update(verdict(Presence::Here), t0, 180s) == t0);
    // ext-idle-notify says idle (the delay passed without input), or the screen locked a moment after input.
    CHECK(last.update(verdict(Presence::Away), t0 + 180s, 180s) == t0);
    CHECK(last.update(verdict(Presence::Away), t0 + 600s, 180s) == t0); // away all along: the time grows
    CHECK(last.update(verdict(Presence::Here), t0 + 601s, 180s) == t0 + 601s);
    // A lock right after input: away at once, with input the delay before, never later.
    CHECK(last.update(verdict(Presence::Away, 2s), t0 + 700s, 180s) == t0 + 520s);
    CHECK(last.update(verdict(Presence::Away, 3s), t0 + 701s, 180s) == t0 + 520s);
}

TEST_CASE("the last input is not known while the presence is not") {
    presence::LastInput last;
    const wallclock::TimePoint t0{std::chrono::seconds(1'800'000'000)};
    CHECK(last.update(verdict(Presence::Away), t0, 180s) == t0 - 180s);
    CHECK_FALSE(last.update(verdict(Presence::Unknown), t0 + 1s, 180s));
    // Away again after not knowing: counted afresh.
    CHECK(last.update(verdict(Presence::Away), t0 + 10s, 180s) == t0 - 170s);
}
