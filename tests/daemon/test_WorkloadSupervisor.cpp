#include "fakes/FakeUnitManager.h"
#include "workload/WorkloadSupervisor.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using nicer::systemd::ExecCommand;
using nicer::test::FakeUnitManager;
using nicer::test::hasProperty;
using nicer::test::propertyValue;
using nicer::test::UnitCall;
using nicer::workload::WorkloadSpec;
using nicer::workload::WorkloadSupervisor;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using TimePoint = WorkloadSupervisor::Clock::time_point;

/// An arbitrary fixed origin: the supervisor only ever compares time points it was given.
const TimePoint t0 = TimePoint{} + 1000h;

/// A directory standing in for PATH, with one executable and one plain file in it.
class FakeBinDir {
public:
    FakeBinDir() {
        static int counter = 0;
        m_dir = fs::temp_directory_path() /
                ("nicer-supervisor-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
        std::ofstream(m_dir / "fake-work") << "#!/bin/sh\nexit 0\n";
        fs::permissions(m_dir / "fake-work", fs::perms::owner_all | fs::perms::group_read |
                                                 fs::perms::group_exec | fs::perms::others_read |
                                                 fs::perms::others_exec);
        std::ofstream(m_dir / "not-executable") << "#!/bin/sh\nexit 0\n";
        fs::permissions(m_dir / "not-executable",
                        fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    }
    ~FakeBinDir() {
        std::error_code ec;
        fs::remove_all(m_dir, ec);
    }
    FakeBinDir(const FakeBinDir&) = delete;
    FakeBinDir& operator=(const FakeBinDir&) = delete;

    const fs::path& dir() const { return m_dir; }
    /// A PATH whose first entry does not exist, so that the search has to go on.
    std::string pathVariable() const { return "/nonexistent/nicer-bin::" + m_dir.string(); }

private:
    fs::path m_dir;
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

const WorkloadSupervisor::Instance& instance(const WorkloadSupervisor& supervisor, std::size_t index) {
    REQUIRE(supervisor.instances().size() > index);
    return supervisor.instances()[index];
}

} // namespace

TEST_CASE("start() fails with a message naming a command that is not in PATH", "[WorkloadSupervisor]") {
    const FakeBinDir bin;
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
    const FakeBinDir bin;
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
    const FakeBinDir bin;
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
    const FakeBinDir bin;
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
    const FakeBinDir bin;
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
    const FakeBinDir bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 2, false}, "nicer.slice",
                                  "nicerd.service");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());
    const std::string unit = "nicer-work-1.service";
    const std::string other = "nicer-work-2.service";
    REQUIRE(startsOf(units, unit).size() == 1);

    // Running instances are left alone.
    REQUIRE(supervisor.poll(t0 + 5s).ok());
    CHECK(instance(supervisor, 0).state == "active");
    CHECK(startsOf(units, unit).size() == 1);

    // The first death waits 1 s.
    units.unit(unit).activeState = "failed";
    TimePoint now = t0 + 10s;
    REQUIRE(supervisor.poll(now).ok());
    CHECK(instance(supervisor, 0).state == "failed");
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
        units.unit(unit).activeState = restarts % 2 ? "inactive" : "failed";
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
    units.unit(unit).activeState = "failed";
    REQUIRE(supervisor.poll(now + 60s).ok());
    CHECK(instance(supervisor, 0).backoff == 1s);
    now += 61s;
    REQUIRE(supervisor.poll(now).ok());
    CHECK(instance(supervisor, 0).restarts == restarts + 1);
    units.unit(unit).activeState = "failed";
    REQUIRE(supervisor.poll(now + 59s).ok());
    CHECK(instance(supervisor, 0).backoff == 2s);

    // The other instance ran all along, untouched.
    CHECK(startsOf(units, other).size() == 1);
    CHECK(instance(supervisor, 1).restarts == 0);
    CHECK(instance(supervisor, 1).backoff == 1s);
}

TEST_CASE("poll() reports a failed restart and a failed state query", "[WorkloadSupervisor]") {
    const FakeBinDir bin;
    FakeUnitManager units;
    WorkloadSupervisor supervisor(units, WorkloadSpec{{"fake-work"}, 1, false}, "nicer.slice", "");
    REQUIRE(supervisor.start(t0, bin.pathVariable()).ok());

    units.fail("activeState", "Connection timed out");
    const auto query = supervisor.poll(t0 + 1s);
    REQUIRE_FALSE(query.ok());
    CHECK_THAT(query.error().message, Catch::Contains("Connection timed out"));
    units.clearFailure("activeState");

    units.unit("nicer-work-1.service").activeState = "failed";
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
    const FakeBinDir bin;
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
        CHECK(i.state == "inactive");
        CHECK(units.unit(i.unit).activeState == "inactive");
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
