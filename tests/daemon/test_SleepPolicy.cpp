// The sleep policy's verdict in each period: awake only with keep-awake, on mains, while the work runs.
#include "daemon/SleepPolicy.h"

#include <catch2/catch.hpp>

using nicer::api::Sample;
using nicer::daemon::sleepVerdict;

namespace {

Sample running() {
    Sample s;
    s.quota = 0.6;
    return s;
}

} // namespace

TEST_CASE("the machine is kept awake only while the work runs on mains and keep-awake says so",
          "[SleepPolicy]") {
    CHECK(sleepVerdict(1, false, running()).awake);
    CHECK(sleepVerdict(1, false, running()).note == "kept awake: the work runs on mains power");

    const auto off = sleepVerdict(0, false, running());
    CHECK_FALSE(off.awake);
    CHECK(off.note == "sleeps as it would without nicer (keep-awake = 0)");

    const auto battery = sleepVerdict(1, true, running());
    CHECK_FALSE(battery.awake);
    CHECK(battery.note == "may sleep: on battery");

    Sample paused = running();
    paused.paused = true;
    paused.quota = 0.0;
    CHECK_FALSE(sleepVerdict(1, false, paused).awake);
    CHECK(sleepVerdict(1, false, paused).note == "may sleep: the work is paused");

    // A rule that paused the work (a game, the schedule) lets the machine sleep; one that only holds it
    // under the controller's quota does not.
    Sample ruled = running();
    ruled.quota = 0.0;
    ruled.heldBy = "schedule";
    CHECK_FALSE(sleepVerdict(1, false, ruled).awake);
    ruled.quota = 0.3;
    ruled.heldBy = "temperature";
    CHECK(sleepVerdict(1, false, ruled).awake);

    // The controller stopping the work for overload is not a pause: the work comes back.
    Sample stopped = running();
    stopped.quota = 0.0;
    CHECK(sleepVerdict(1, false, stopped).awake);
}
