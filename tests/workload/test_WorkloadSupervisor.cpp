#include "fakes/FakeBinDir.h"
#include "fakes/FakeUnitManager.h"
#include "workload/WorkloadSupervisor.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using nicer::test::FakeBinDir;
using nicer::test::FakeUnitManager;
using nicer::test::hasProperty;
using nicer::test::propertyValue;
using nicer::test::UnitCall;
using nicer::usermanager::ExecCommand;
using nicer::workload::WorkloadSpec;
using nicer::workload::WorkloadSupervisor;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using TimePoint = WorkloadSupervisor::Clock::time_point;

/// An arbitrary fixed origin: the supervisor only ever compares time points it was given.
const TimePoint t0 = TimePoint{} + 1000h;

/// PATH for the supervisor: "fake-work" is a program, "not-executable" a plain file.
class SupervisorBin : public FakeBinDir {
public:
    SupervisorBin() {
        add("fake-work");
        add("not-executable", "#!/bin/sh\nexit 0\n", false);
    }
};

std::vector<UnitCall> startsOf(const FakeUnitManager& units, const std::string& unit) {
    std::vector<UnitCall> out;
    for (const auto& call : units.callsTo("startTransientUnit")) {
        if (call.unit == unit) {
            out.push_back(call);
        }
    }
    return out;
}

/// Where @p unit's first call of @p method stands among @p units' actions; -1 for none.
std::ptrdiff_t firstAction(const FakeUnitManager& units, const std::string& method, const std::string& unit) {
    const auto actions = units.actions();
    const auto found = std::find_if(actions.begin(), actions.end(),
                                    [&](const UnitCall& c) { return c.method == method && c.unit == unit; });
    return found == actions.end() ? -1 : found - actions.begin();
}

/// @p unit was thawed, then stopped: a frozen task cannot act on its SIGTERM.
void checkThawedBeforeStopped(const FakeUnitManager& units, const std::string& unit) {
    const auto thaw = firstAction(units, "thawUnit", unit);
    const auto stop = firstAction(units, "stopUnit", unit);
    REQUIRE(thaw >= 0);
    REQUIRE(stop >= 0);
    CHECK(thaw < stop);
}

const WorkloadSupervisor::Instance& instance(const WorkloadSupervisor& supervisor, std::size_t index) {
    REQUIRE(supervisor.instances().size() > index);
    return supervisor.instances()[index];
}

} // namespace

TEST_CASE("start() fails with a message naming a command that is not in PATH", "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"nicer-no-such-command", "-x"}, 2, false},
                                  "nicer.slice", "nicerd.service");
    const auto started = supervisor.start(t0, bin.pathVariable());
    REQUIRE_FALSE(started.ok());
    CHECK_THAT(started.error().message,
               Catch::Contains("'nicer-no-such-command'") && Catch::Contains("PATH"));
    CHECK(units.callsTo("startTransientUnit").empty());
}

TEST_CASE("start() fails for a relative path to a file that is not executable", "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    std::string relative = fs::relative(bin.dir() / "not-executable").string();
    if (relative.find('/') == std::string::npos) {
        relative = "./" + relative; // a '/' is what makes it a path rather than a name to search
    }
    WorkloadSupervisor supervisor(units, WorkloadSpec{{relative}, 1, false}, "nicer.slice", "");
    const auto started = supervisor.start(t0, bin.pathVariable());
    REQUIRE_FALSE(started.ok());
    CHECK_THAT(started.error().message,
               Catch::Contains("not-executable") && Catch::Contains("is not an executable file"));
    CHECK(units.callsTo("startTransientUnit").empty());
}

TEST_CASE("start() refuses an empty command and fewer than one instance", "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    WorkloadSupervisor noCommand(units, WorkloadSpec{{}, 1, false}, "nicer.slice", "");
    CHECK_FALSE(noCommand.start(t0, bin.pathVariable()).ok());
    WorkloadSupervisor noInstance(units, WorkloadSpec{{"fake-work"}, 0, false}, "nicer.slice", "");
    const auto none = noInstance.start(t0, bin.pathVariable());
    REQUIRE_FALSE(none.ok());
    CHECK_THAT(none.error().message, Catch::Contains("instances = 0"));
    CHECK(units.callsTo("startTransientUnit").empty());
}

TEST_CASE("start() runs N services in the slice, bound to the daemon's unit", "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    const std::vector<std::string> argv{"fake-work", "--threads", "1", "a b"};
    WorkloadSupervisor supervisor(units, WorkloadSpec{argv, 3, false}, "nicer.slice", "nicerd.service");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());

    const auto starts = units.callsTo("startTransientUnit");
    REQUIRE(starts.size() == 3);
    REQUIRE(supervisor.instances().size() == 3);
    for (std::size_t i = 0; i < starts.size(); ++i) {
        const auto& call = starts[i];
        const std::string unit = "nicer-work-" + std::to_string(i + 1) + ".service";
        INFO(unit);
        CHECK(call.unit == unit);
        CHECK(supervisor.instances()[i].unit == unit);
        CHECK(propertyValue<std::string>(call.props, "Slice") == "nicer.slice");
        const auto exec = propertyValue<std::vector<ExecCommand>>(call.props, "ExecStart");
        REQUIRE(exec);
        REQUIRE(exec->size() == 1);
        CHECK(exec->front().path == (bin.dir() / "fake-work").string());
        CHECK(exec->front().argv == argv); // argv[0] as the user gave it; no shell, so "a b" stays one
        CHECK_FALSE(exec->front().ignoreFailure);
        CHECK(propertyValue<std::string>(call.props, "CollectMode") == "inactive-or-failed");
        CHECK(propertyValue<std::vector<std::string>>(call.props, "BindsTo") ==
              std::vector<std::string>{"nicerd.service"});
        CHECK(propertyValue<std::vector<std::string>>(call.props, "After") ==
              std::vector<std::string>{"nicerd.service"});
    }

    // A unit of the same name left by a crashed run is cleared away before each start.
    const auto actions = units.actions();
    REQUIRE(actions.size() == 9);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(actions[3 * i].method == "stopUnit");
        CHECK(actions[3 * i].wait);
        CHECK(actions[3 * i + 1].method == "resetFailedUnit");
        CHECK(actions[3 * i + 2].method == "startTransientUnit");
        CHECK(actions[3 * i].unit == actions[3 * i + 2].unit);
    }
}

TEST_CASE("start() binds nothing when the daemon has no unit, and keeps an absolute command",
          "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    const std::string absolute = (bin.dir() / "fake-work").string();
    WorkloadSupervisor supervisor(units, WorkloadSpec{{absolute, "x"}, 1, false}, "nicer.slice", "", "demo");
    REQUIRE(supervisor.start(t0, "/nonexistent").ok());
    const auto starts = units.callsTo("startTransientUnit");
    REQUIRE(starts.size() == 1);
    CHECK(starts[0].unit == "demo-1.service");
    CHECK_FALSE(nicer::test::hasProperty(starts[0].props, "BindsTo"));
    CHECK_FALSE(hasProperty(starts[0].props, "After"));
    const auto exec = propertyValue<std::vector<ExecCommand>>(starts[0].props, "ExecStart");
    REQUIRE(exec);
    CHECK(exec->front().path == absolute);
}

TEST_CASE("poll() restarts a dead instance after a backoff that doubles while it dies young",
          "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 2, false}, "nicer.slice",
                                  "nicerd.service");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    const std::string unit = "nicer-work-1.service";
    const std::string other = "nicer-work-2.service";
    REQUIRE(startsOf(units, unit).size() == 1);

    // Running instances are left alone.
    REQUIRE(supervisor.poll(t0 + 5s).ok());
    CHECK(instance(supervisor, 0).state == nicer::usermanager::UnitState::Active);
    CHECK(startsOf(units, unit).size() == 1);

    // The first death waits 1 s.
    units.unit(unit).activeState = nicer::usermanager::UnitState::Failed;
    TimePoint now = t0 + 10s;
    REQUIRE(supervisor.poll(now).ok());
    CHECK(instance(supervisor, 0).state == nicer::usermanager::UnitState::Failed);
    CHECK(instance(supervisor, 0).backoff == 1s);
    REQUIRE(supervisor.poll(now + 999ms).ok());
    CHECK(startsOf(units, unit).size() == 1);
    const auto resetsBefore = units.callsTo("resetFailedUnit").size();
    now += 1s;
    REQUIRE(supervisor.poll(now).ok());
    CHECK(startsOf(units, unit).size() == 2);
    CHECK(units.callsTo("resetFailedUnit").size() == resetsBefore + 1);
    CHECK(instance(supervisor, 0).restarts == 1);
    CHECK(instance(supervisor, 0).startedAt == now);
    CHECK_FALSE(instance(supervisor, 0).restartAt.has_value());

    // Each young death doubles the wait, up to 5 minutes.
    const std::vector<std::chrono::seconds> expected{2s, 4s, 8s, 16s, 32s, 64s, 128s, 256s, 300s, 300s};
    int restarts = 1;
    for (const auto backoff : expected) {
        INFO("backoff " << backoff.count() << " s");
        units.unit(unit).activeState =
            restarts % 2 ? nicer::usermanager::UnitState::Inactive : nicer::usermanager::UnitState::Failed;
        const TimePoint died = now + 5s;
        REQUIRE(supervisor.poll(died).ok());
        CHECK(instance(supervisor, 0).backoff == backoff);
        REQUIRE(supervisor.poll(died + backoff - 1ms).ok());
        CHECK(startsOf(units, unit).size() == static_cast<std::size_t>(restarts + 1));
        now = died + backoff;
        REQUIRE(supervisor.poll(now).ok());
        ++restarts;
        CHECK(startsOf(units, unit).size() == static_cast<std::size_t>(restarts + 1));
        CHECK(instance(supervisor, 0).restarts == restarts);
    }

    // A run of a minute earns a fresh start: 1 s again, then doubling anew.
    units.unit(unit).activeState = nicer::usermanager::UnitState::Failed;
    REQUIRE(supervisor.poll(now + 60s).ok());
    CHECK(instance(supervisor, 0).backoff == 1s);
    now += 61s;
    REQUIRE(supervisor.poll(now).ok());
    CHECK(instance(supervisor, 0).restarts == restarts + 1);
    units.unit(unit).activeState = nicer::usermanager::UnitState::Failed;
    REQUIRE(supervisor.poll(now + 59s).ok());
    CHECK(instance(supervisor, 0).backoff == 2s);

    // The other instance ran all along, untouched.
    CHECK(startsOf(units, other).size() == 1);
    CHECK(instance(supervisor, 1).restarts == 0);
    CHECK(instance(supervisor, 1).backoff == 1s);
}

TEST_CASE("poll() reports a failed restart and a failed state query", "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 1, false}, "nicer.slice", "");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());

    units.fail("activeState", "Connection timed out");
    const auto query = supervisor.poll(t0 + 1s);
    REQUIRE_FALSE(query.ok());
    CHECK_THAT(query.error().message, Catch::Contains("Connection timed out"));
    units.clearFailure("activeState");

    units.unit("nicer-work-1.service").activeState = nicer::usermanager::UnitState::Failed;
    units.fail("startTransientUnit", "Unit nicer-work-1.service already exists");
    REQUIRE(supervisor.poll(t0 + 2s).ok()); // waits its backoff first
    const auto restart = supervisor.poll(t0 + 3s);
    REQUIRE_FALSE(restart.ok());
    CHECK_THAT(restart.error().message, Catch::Contains("already exists"));
    CHECK(supervisor.instances()[0].restarts == 0); // only successful restarts count

    // A failed restart waits its backoff again instead of retrying every period.
    const auto startsBefore = units.callsTo("startTransientUnit").size();
    REQUIRE(supervisor.poll(t0 + 3s + 500ms).ok());
    CHECK(units.callsTo("startTransientUnit").size() == startsBefore);
    units.clearFailure("startTransientUnit");
    REQUIRE(supervisor.poll(t0 + 4s).ok());
    CHECK(units.callsTo("startTransientUnit").size() == startsBefore + 1);
    CHECK(supervisor.instances()[0].restarts == 1);
}

TEST_CASE("stop() stops every instance and adopted scope, waiting for systemd", "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 2, false}, "nicer.slice",
                                  "nicerd.service");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    REQUIRE(supervisor.adopt({4242}).ok());
    const std::string scope = units.callsTo("startTransientUnit").back().unit;
    units.clearCalls();

    REQUIRE(supervisor.stop().ok());
    const auto stops = units.callsTo("stopUnit");
    REQUIRE(stops.size() == 3);
    CHECK(stops[0].unit == "nicer-work-1.service");
    CHECK(stops[1].unit == "nicer-work-2.service");
    CHECK(stops[2].unit == scope);
    for (const auto& stop : stops) {
        CHECK(stop.wait);
    }
    for (const auto& i : supervisor.instances()) {
        CHECK(i.state == nicer::usermanager::UnitState::Inactive);
        CHECK(units.unit(i.unit).activeState == nicer::usermanager::UnitState::Inactive);
    }

    SECTION("a failed stop is reported, and the other units are still stopped") {
        units.clearCalls();
        units.fail("stopUnit", "Access denied",
                   [](const UnitCall& c) { return c.unit == "nicer-work-1.service"; });
        const auto stopped = supervisor.stop();
        REQUIRE_FALSE(stopped.ok());
        CHECK_THAT(stopped.error().message, Catch::Contains("Access denied"));
        CHECK(units.callsTo("stopUnit").size() == 2); // the scope was stopped and forgotten the first time
    }
}

TEST_CASE("adopt() moves PIDs into a scope in the slice", "[WorkloadSupervisor]") {
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 1, false}, "nicer.slice",
                                  "nicerd.service");

    const auto empty = supervisor.adopt({});
    REQUIRE_FALSE(empty.ok());
    CHECK_THAT(empty.error().message, Catch::Contains("no process"));
    CHECK(units.callsTo("startTransientUnit").empty());

    REQUIRE(supervisor.adopt({1234, 5678}).ok());
    const auto starts = units.callsTo("startTransientUnit");
    REQUIRE(starts.size() == 1);
    const auto& scope = starts[0];
    CHECK_THAT(scope.unit, Catch::StartsWith("nicer-work-adopted-") && Catch::EndsWith(".scope"));
    CHECK(scope.wait);
    CHECK(propertyValue<std::string>(scope.props, "Slice") == "nicer.slice");
    CHECK(propertyValue<std::vector<std::uint32_t>>(scope.props, "PIDs") ==
          std::vector<std::uint32_t>{1234, 5678});
    CHECK(propertyValue<std::vector<std::string>>(scope.props, "BindsTo") ==
          std::vector<std::string>{"nicerd.service"});

    // A second adoption gets its own scope.
    REQUIRE(supervisor.adopt({99}).ok());
    CHECK(units.callsTo("startTransientUnit").back().unit != scope.unit);

    units.fail("startTransientUnit", "Access denied");
    const auto refused = supervisor.adopt({1});
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("cannot adopt") && Catch::Contains("Access denied"));
}

TEST_CASE("switchTo() replaces the instances in the same slice and binding, and keeps adopted scopes",
          "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    bin.add("other-work");
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 2, true, "demo"}, "nicer.slice",
                                  "nicerd.service");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    REQUIRE(supervisor.adopt({4242}).ok());
    const std::string scope = units.callsTo("startTransientUnit").back().unit;
    units.clearCalls();

    const std::vector<std::string> argv{"other-work", "--dir", "/data/boinc"};
    REQUIRE(supervisor.switchTo(WorkloadSpec{argv, 1, false, "boinc"}, t0 + 5s, bin.pathVariable()).ok());
    CHECK(supervisor.spec().preset == "boinc");
    CHECK(supervisor.spec().argv == argv);
    REQUIRE(supervisor.instances().size() == 1);
    CHECK(instance(supervisor, 0).unit == "nicer-work-1.service");
    CHECK(instance(supervisor, 0).state == nicer::usermanager::UnitState::Activating);

    // Both old units are stopped (and waited for) before the new one starts; the adopted scope stays.
    const auto actions = units.actions();
    REQUIRE(actions.size() >= 3);
    CHECK(actions[0].method == "stopUnit");
    CHECK(actions[0].unit == "nicer-work-1.service");
    CHECK(actions[0].wait);
    CHECK(actions[1].method == "stopUnit");
    CHECK(actions[1].unit == "nicer-work-2.service");
    CHECK(actions[1].wait);
    CHECK(actions.back().method == "startTransientUnit");
    for (const auto& stop : units.callsTo("stopUnit")) {
        CHECK(stop.unit != scope);
    }
    const auto starts = units.callsTo("startTransientUnit");
    REQUIRE(starts.size() == 1);
    const auto& start = starts[0];
    CHECK(start.unit == "nicer-work-1.service");
    CHECK(propertyValue<std::string>(start.props, "Slice") == "nicer.slice");
    CHECK(propertyValue<std::vector<std::string>>(start.props, "BindsTo") ==
          std::vector<std::string>{"nicerd.service"});
    const auto exec = propertyValue<std::vector<ExecCommand>>(start.props, "ExecStart");
    REQUIRE(exec);
    CHECK(exec->front().path == (bin.dir() / "other-work").string());
    CHECK(exec->front().argv == argv);
    CHECK(units.unit("nicer-work-2.service").activeState == nicer::usermanager::UnitState::Inactive);

    // The new instance is supervised like the first ones were, and stop() still ends the adopted scope.
    units.unit("nicer-work-1.service").activeState = nicer::usermanager::UnitState::Failed;
    REQUIRE(supervisor.poll(t0 + 10s).ok());
    REQUIRE(supervisor.poll(t0 + 11s).ok());
    CHECK(startsOf(units, "nicer-work-1.service").size() == 2);
    CHECK(instance(supervisor, 0).restarts == 1);
    units.clearCalls();
    REQUIRE(supervisor.stop().ok());
    CHECK(units.callsTo("stopUnit").back().unit == scope);
}

TEST_CASE("switchTo() changes nothing when the new command cannot be found", "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 2, true, "demo"}, "nicer.slice", "");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    units.clearCalls();

    const auto switched = supervisor.switchTo(WorkloadSpec{{"nicer-no-such-client"}, 1, false, "boinc"}, t0,
                                              bin.pathVariable());
    REQUIRE_FALSE(switched.ok());
    CHECK_THAT(switched.error().message, Catch::Contains("'nicer-no-such-client'"));
    CHECK(units.actions().empty());
    CHECK(supervisor.spec().preset == "demo");
    CHECK(supervisor.instances().size() == 2);

    const auto none =
        supervisor.switchTo(WorkloadSpec{{"fake-work"}, 0, false, "custom"}, t0, bin.pathVariable());
    REQUIRE_FALSE(none.ok());
    CHECK_THAT(none.error().message, Catch::Contains("instances = 0"));
    CHECK(units.actions().empty());
}

TEST_CASE("switchTo() keeps the running workload when one of its units does not stop",
          "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    bin.add("other-work");
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 2, true, "demo"}, "nicer.slice", "");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    units.clearCalls();
    units.fail("stopUnit", "Access denied",
               [](const UnitCall& c) { return c.unit == "nicer-work-2.service"; });

    const auto switched =
        supervisor.switchTo(WorkloadSpec{{"other-work"}, 1, false, "boinc"}, t0 + 1s, bin.pathVariable());
    REQUIRE_FALSE(switched.ok());
    CHECK_THAT(switched.error().message,
               Catch::Contains("cannot stop the running workload") && Catch::Contains("Access denied"));
    CHECK(supervisor.spec().preset == "demo");
    CHECK(units.callsTo("startTransientUnit").empty());

    // The unit that did stop comes back through the usual restart.
    units.clearFailure("stopUnit");
    REQUIRE(supervisor.poll(t0 + 2s).ok());
    REQUIRE(supervisor.poll(t0 + 3s).ok());
    const auto restarts = startsOf(units, "nicer-work-1.service");
    REQUIRE(restarts.size() == 1);
    CHECK(propertyValue<std::vector<ExecCommand>>(restarts[0].props, "ExecStart")->front().path ==
          (bin.dir() / "fake-work").string());
}

TEST_CASE("switchTo() starts the previous workload again when the new one does not start",
          "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    const auto other = bin.add("other-work").string();
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work", "-v"}, 2, true, "demo"}, "nicer.slice",
                                  "nicerd.service");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    units.clearCalls();
    const auto runsOther = [other](const UnitCall& c) {
        const auto exec = propertyValue<std::vector<ExecCommand>>(c.props, "ExecStart");
        return exec && exec->front().path == other;
    };

    SECTION("the previous workload runs again") {
        units.fail("startTransientUnit", "Unit nicer-work-1.service already exists", runsOther);
        const auto switched =
            supervisor.switchTo(WorkloadSpec{{"other-work"}, 1, false, "boinc"}, t0 + 1s, bin.pathVariable());
        REQUIRE_FALSE(switched.ok());
        CHECK_THAT(switched.error().message, Catch::Contains("cannot start other-work") &&
                                                 Catch::Contains("already exists") &&
                                                 Catch::Contains("the previous workload runs again"));
        CHECK(supervisor.spec().preset == "demo");
        CHECK(supervisor.spec().argv == std::vector<std::string>{"fake-work", "-v"});
        REQUIRE(supervisor.instances().size() == 2);
        // The last two starts bring both demo units back.
        const auto starts = units.callsTo("startTransientUnit");
        REQUIRE(starts.size() == 3);
        for (std::size_t i = 1; i < 3; ++i) {
            CHECK(starts[i].unit == "nicer-work-" + std::to_string(i) + ".service");
            CHECK(propertyValue<std::vector<ExecCommand>>(starts[i].props, "ExecStart")->front().path ==
                  (bin.dir() / "fake-work").string());
        }
        CHECK(units.unit("nicer-work-1.service").activeState == nicer::usermanager::UnitState::Active);
        CHECK(units.unit("nicer-work-2.service").activeState == nicer::usermanager::UnitState::Active);
    }
    SECTION("neither starts: the error says so, and poll() keeps trying the previous one") {
        units.fail("startTransientUnit", "Access denied");
        const auto switched =
            supervisor.switchTo(WorkloadSpec{{"other-work"}, 1, false, "boinc"}, t0 + 1s, bin.pathVariable());
        REQUIRE_FALSE(switched.ok());
        CHECK_THAT(switched.error().message, Catch::Contains("did not start again either"));
        CHECK(supervisor.spec().preset == "demo");
        units.clearFailure("startTransientUnit");
        REQUIRE(supervisor.poll(t0 + 2s).ok());
        REQUIRE(supervisor.poll(t0 + 3s).ok());
        CHECK(units.unit("nicer-work-1.service").activeState == nicer::usermanager::UnitState::Active);
        CHECK(units.unit("nicer-work-2.service").activeState == nicer::usermanager::UnitState::Active);
    }
}

TEST_CASE("limitRunning() freezes the last instances, holds one started again, and thaws them when allowed",
          "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 3, false}, "nicer.slice", "");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    REQUIRE(supervisor.poll(t0).ok());
    CHECK(supervisor.running() == 3);
    const auto frozen = [&](int i) {
        return units.unit("nicer-work-" + std::to_string(i) + ".service").frozen;
    };

    supervisor.limitRunning(1);
    REQUIRE(supervisor.poll(t0 + 1s).ok());
    CHECK_FALSE(frozen(1));
    CHECK(frozen(2));
    CHECK(frozen(3));
    CHECK(supervisor.running() == 1);
    // As it should be: nothing more is asked of the manager.
    units.clearCalls();
    REQUIRE(supervisor.poll(t0 + 2s).ok());
    CHECK(units.callsTo("freezeUnit").empty());
    CHECK(units.callsTo("thawUnit").empty());

    // The third dies and is started again, in a new cgroup: held again once it runs.
    units.unit("nicer-work-3.service").activeState = nicer::usermanager::UnitState::Failed;
    units.unit("nicer-work-3.service").frozen = false;
    REQUIRE(supervisor.poll(t0 + 3s).ok());
    REQUIRE(supervisor.poll(t0 + 5s).ok()); // its backoff passed: started
    CHECK(supervisor.instances()[2].restarts == 1);
    REQUIRE(supervisor.poll(t0 + 6s).ok());
    CHECK(frozen(3));
    CHECK(supervisor.running() == 1);

    // All of them again.
    supervisor.limitRunning(0);
    REQUIRE(supervisor.poll(t0 + 7s).ok());
    CHECK_FALSE(frozen(2));
    CHECK_FALSE(frozen(3));
    CHECK(supervisor.running() == 3);

    // A stop thaws a frozen instance first, so that it can act on the stop signal.
    supervisor.limitRunning(2);
    REQUIRE(supervisor.poll(t0 + 8s).ok());
    REQUIRE(frozen(3));
    units.clearCalls();
    REQUIRE(supervisor.stop().ok());
    checkThawedBeforeStopped(units, "nicer-work-3.service");
}

TEST_CASE("where the manager cannot freeze a unit, an instance is held with SIGSTOP every period, and "
          "continued when allowed",
          "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 2, false}, "nicer.slice", "");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    REQUIRE(supervisor.poll(t0).ok());
    // systemd on a hybrid cgroup tree.
    units.fail("freezeUnit", "Unit 'nicer-work-2.service' does not support freezing.");
    supervisor.limitRunning(1);
    units.clearCalls();
    REQUIRE(supervisor.poll(t0 + 1s).ok());
    CHECK(supervisor.running() == 1);
    auto kills = units.callsTo("killUnit");
    REQUIRE(kills.size() == 1);
    CHECK(kills[0].unit == "nicer-work-2.service");
    CHECK(kills[0].signal == SIGSTOP);
    // Again the next period (a resume of the slice sends SIGCONT to all), and no freeze asked again.
    units.clearCalls();
    REQUIRE(supervisor.poll(t0 + 2s).ok());
    CHECK(units.callsTo("killUnit").size() == 1);
    CHECK(units.callsTo("freezeUnit").empty());
    supervisor.limitRunning(0);
    units.clearCalls();
    REQUIRE(supervisor.poll(t0 + 3s).ok());
    kills = units.callsTo("killUnit");
    REQUIRE(kills.size() == 1);
    CHECK(kills[0].signal == SIGCONT);
    CHECK(supervisor.running() == 2);
}

TEST_CASE("an instance that can be neither frozen nor stopped keeps running, and poll() still succeeds",
          "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 2, false}, "nicer.slice", "");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    REQUIRE(supervisor.poll(t0).ok());
    units.fail("freezeUnit", "Unit 'nicer-work-2.service' does not support freezing.");
    units.fail("killUnit", "Access denied");
    supervisor.limitRunning(1);
    CHECK(supervisor.poll(t0 + 1s).ok()); // the work's restarts are what poll() reports; the hold is logged
    CHECK(supervisor.running() == 2);
    units.clearFailure("killUnit");
    REQUIRE(supervisor.poll(t0 + 2s).ok());
    CHECK(supervisor.running() == 1);
}

TEST_CASE(
    "keepEnded() ends the last instances, thawed first, keeps them ended, and starts them again one by one "
    "as the count falls",
    "[WorkloadSupervisor]") {
    const SupervisorBin bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 3, false}, "nicer.slice", "");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    REQUIRE(supervisor.poll(t0).ok());
    const auto active = [&](int i) {
        return units.unit("nicer-work-" + std::to_string(i) + ".service").activeState ==
               nicer::usermanager::UnitState::Active;
    };
    // The memory rule froze the third (a profile's count here) before it ends it: thawed, then stopped.
    supervisor.limitRunning(2);
    REQUIRE(supervisor.poll(t0 + 1s).ok());
    units.clearCalls();
    supervisor.keepEnded(2);
    REQUIRE(supervisor.poll(t0 + 2s).ok());
    CHECK(supervisor.ended() == 2);
    CHECK(active(1));
    CHECK_FALSE(active(2));
    CHECK_FALSE(active(3));
    checkThawedBeforeStopped(units, "nicer-work-3.service");
    // Ended stays ended: no backoff starts them again.
    REQUIRE(supervisor.poll(t0 + 60s).ok());
    CHECK_FALSE(active(2));
    CHECK_FALSE(active(3));
    // One fewer: the second starts again, the third stays ended.
    supervisor.keepEnded(1);
    REQUIRE(supervisor.poll(t0 + 61s).ok());
    CHECK(active(2));
    CHECK_FALSE(active(3));
    CHECK(supervisor.ended() == 1);
    supervisor.limitRunning(0);
    supervisor.keepEnded(0);
    REQUIRE(supervisor.poll(t0 + 62s).ok());
    CHECK(active(3));
    CHECK(supervisor.ended() == 0);
}
