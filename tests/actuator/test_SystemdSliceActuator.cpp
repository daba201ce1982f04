#include "Poll.h"
#include "SliceTestSupport.h"
#include "actuator/SystemdSliceActuator.h"
#include "fakes/ChildProcess.h"
#include "fakes/FakeCgroupTree.h"
#include "fakes/FakeUnitManager.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>

using nicer::actuator::kMinQuotaPerSecUSec;
using nicer::actuator::SystemdSliceActuator;
using nicer::kernel::CgroupLayout;
using nicer::test::FakeUnitManager;
using nicer::test::kSlice;
using nicer::test::parseLayout;
using nicer::test::propertyValue;
using nicer::test::UnitCall;
namespace fs = std::filesystem;

namespace {

using TempTree = nicer::test::FakeCgroupTree;

/// The CI machines' shape: v1 cpu hierarchy plus a v2 "unified" tree that has cgroup.freeze and cpu.stat.
CgroupLayout hybridLayout(const TempTree& tree, bool withFreezeFile = true) {
    tree.write("cpu/nicer.slice/cpu.cfs_quota_us", "-1\n");
    tree.write("cpu/nicer.slice/cpu.cfs_period_us", "100000\n");
    tree.write("unified/nicer.slice/cgroup.procs", "");
    if (withFreezeFile) {
        tree.write("unified/nicer.slice/cgroup.freeze", "0\n");
    }
    return parseLayout(tree.mountLine("cpu", "cgroup", "rw,cpu") +
                       tree.mountLine("unified", "cgroup2", "rw,nsdelegate"));
}

/// Pure cgroup v1 with the cpu controller only: neither cgroup.freeze nor a v2 cpu.stat exists.
CgroupLayout v1OnlyLayout(const TempTree& tree) {
    tree.write("cpu/nicer.slice/cpu.cfs_quota_us", "-1\n");
    tree.write("cpu/nicer.slice/cpu.cfs_period_us", "100000\n");
    return parseLayout(tree.mountLine("cpu", "cgroup", "rw,cpu"));
}

std::unique_ptr<SystemdSliceActuator> createActuator(FakeUnitManager& units, CgroupLayout layout) {
    auto created = SystemdSliceActuator::create(units, std::move(layout), kSlice);
    INFO((created ? std::string() : created.error().message));
    REQUIRE(created.ok());
    return std::move(created).value();
}

/// The CPUQuotaPerSecUSec values sent so far, in order, waited for or not.
std::vector<std::uint64_t> quotasSent(const FakeUnitManager& units) {
    std::vector<std::uint64_t> out;
    for (const auto& call : units.calls()) {
        if (call.method != "setUnitProperties" && call.method != "setUnitPropertiesAsync") {
            continue;
        }
        if (const auto usec = propertyValue<std::uint64_t>(call.props, "CPUQuotaPerSecUSec")) {
            out.push_back(*usec);
        }
    }
    return out;
}

/// The actions since index @p from of actions(), as "method" or "method:signal" for killUnit.
std::vector<std::string> actionNames(const FakeUnitManager& units, std::size_t from = 0) {
    std::vector<std::string> out;
    const auto actions = units.actions();
    for (std::size_t i = from; i < actions.size(); ++i) {
        const auto& c = actions[i];
        out.push_back(c.method == "killUnit" ? c.method + ":" + std::to_string(c.signal) : c.method);
    }
    return out;
}

bool cpuWeightIs(const UnitCall& call, std::uint64_t weight) {
    return propertyValue<std::uint64_t>(call.props, "CPUWeight") == weight;
}

/// nicer.slice already active, as an earlier run left it: create() takes it over.
void activeSlice(FakeUnitManager& units) {
    units.unit(kSlice).activeState = nicer::usermanager::UnitState::Active;
    units.unit(kSlice).controlGroup = "/nicer.slice";
}

} // namespace

TEST_CASE("create() starts the slice with CPU accounting and the idle weight", "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    const auto actuator = createActuator(units, hybridLayout(tree));

    const auto starts = units.callsTo("startTransientUnit");
    REQUIRE(starts.size() == 1);
    CHECK(starts[0].unit == kSlice);
    CHECK(starts[0].wait);
    CHECK(propertyValue<bool>(starts[0].props, "CPUAccounting") == true);
    CHECK(cpuWeightIs(starts[0], 0));
    // The slice starts at the smallest cap, so nothing runs uncapped before the first period.
    CHECK(propertyValue<std::uint64_t>(starts[0].props, "CPUQuotaPerSecUSec") == kMinQuotaPerSecUSec);
    // systemd's own bandwidth period (a longer one lets the work exceed a changing quota: SliceOptions), left
    // unsaid, as systemd before 242 does not know the property.
    CHECK_FALSE(nicer::test::hasProperty(starts[0].props, "CPUQuotaPeriodUSec"));
    CHECK(actuator->cgroup() == "/nicer.slice");
    CHECK(actuator->name() == "systemd-slice");
    CHECK(actuator->capsByCpuBandwidth()); // the daemon checks that the kernel enforces its cpu.max
    CHECK_FALSE(actuator->frozen());
    CHECK(units.callsTo("stopUnit").empty());
}

TEST_CASE("create() falls back to CPUWeight 1 where systemd rejects 0", "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    units.fail("startTransientUnit", "Value specified in CPUWeight is out of range",
               [](const UnitCall& c) { return cpuWeightIs(c, 0); });

    const auto actuator = createActuator(units, hybridLayout(tree));
    const auto starts = units.callsTo("startTransientUnit");
    REQUIRE(starts.size() == 2);
    CHECK(cpuWeightIs(starts[0], 0));
    CHECK(cpuWeightIs(starts[1], 1));
    CHECK(propertyValue<bool>(starts[1].props, "CPUAccounting") == true);
    CHECK(units.unit(kSlice).activeState == nicer::usermanager::UnitState::Active);
}

TEST_CASE("the slice's note says when systemd refused CPUWeight=idle, with systemd's version",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    units.version = "249.11-0ubuntu3.12";
    units.fail("startTransientUnit", "Value specified in CPUWeight is out of range",
               [](const UnitCall& c) { return cpuWeightIs(c, 0); });
    const auto refused = createActuator(units, hybridLayout(tree));
    CHECK_THAT(refused->note(), Catch::Contains("systemd 249.11-0ubuntu3.12 refuses CPUWeight=idle") &&
                                    Catch::Contains("smallest CPU weight") &&
                                    Catch::Contains("only its quota"));

    // Taken, or not asked for: nothing to say.
    FakeUnitManager taken;
    CHECK(createActuator(taken, hybridLayout(tree))->note().empty());
    CHECK(taken.callsTo("managerVersion").empty());
    FakeUnitManager notAsked;
    auto created = SystemdSliceActuator::create(notAsked, hybridLayout(tree), kSlice,
                                                {.idleWeight = false, .quotaPeriod = std::nullopt});
    REQUIRE(created.ok());
    CHECK((*created)->note().empty());
}

TEST_CASE("create() without the idle weight keeps systemd's default weight (the thesis's mode)",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    auto created = SystemdSliceActuator::create(
        units, hybridLayout(tree), kSlice, {.idleWeight = false, .quotaPeriod = std::chrono::seconds(1)});
    REQUIRE(created.ok());
    const auto starts = units.callsTo("startTransientUnit");
    REQUIRE(starts.size() == 1);
    CHECK(cpuWeightIs(starts[0], 100));
    CHECK(propertyValue<std::uint64_t>(starts[0].props, "CPUQuotaPerSecUSec") == kMinQuotaPerSecUSec);
    CHECK(propertyValue<std::uint64_t>(starts[0].props, "CPUQuotaPeriodUSec") == 1'000'000);

    // A slice an earlier run left with the idle weight gets the default one back.
    FakeUnitManager again;
    activeSlice(again);
    REQUIRE(SystemdSliceActuator::create(again, hybridLayout(tree), kSlice,
                                         {.idleWeight = false, .quotaPeriod = std::nullopt})
                .ok());
    const auto sets = again.callsTo("setUnitProperties");
    REQUIRE(sets.size() == 1);
    CHECK(cpuWeightIs(sets[0], 100));
}

TEST_CASE("the bandwidth window: set at creation, changed later, systemd's own where it knows no other",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    auto created = SystemdSliceActuator::create(units, hybridLayout(tree), kSlice,
                                                {.idleWeight = true, .quotaPeriod = std::chrono::seconds(1)});
    REQUIRE(created.ok());
    auto& actuator = **created;
    CHECK(actuator.bandwidthWindow() == std::chrono::seconds(1));
    REQUIRE(actuator.setBandwidthWindow(std::chrono::milliseconds(500)).ok());
    REQUIRE(actuator.setBandwidthWindow(std::chrono::milliseconds(500)).ok()); // unchanged: no call
    const auto sets = units.callsTo("setUnitProperties");
    REQUIRE(sets.size() == 1);
    CHECK(propertyValue<std::uint64_t>(sets[0].props, "CPUQuotaPeriodUSec") == 500'000);
    CHECK(actuator.bandwidthWindow() == std::chrono::milliseconds(500));

    // systemd's own 100 ms, when asked for, is said too: a slice taken over may have been left with another.
    FakeUnitManager taken;
    activeSlice(taken);
    REQUIRE(SystemdSliceActuator::create(
                taken, hybridLayout(tree), kSlice,
                {.idleWeight = true, .quotaPeriod = nicer::actuator::kSystemdQuotaPeriod})
                .ok());
    REQUIRE(taken.callsTo("setUnitProperties").size() == 1);
    CHECK(propertyValue<std::uint64_t>(taken.callsTo("setUnitProperties")[0].props, "CPUQuotaPeriodUSec") ==
          100'000);

    // systemd before 242 knows no CPUQuotaPeriodUSec (nor CPUWeight 0): the slice starts with its 100 ms.
    FakeUnitManager old;
    old.fail("startTransientUnit", "Cannot set property CPUQuotaPeriodUSec, or unknown property.",
             [](const UnitCall& c) { return nicer::test::hasProperty(c.props, "CPUQuotaPeriodUSec"); });
    auto fallback = SystemdSliceActuator::create(
        old, hybridLayout(tree), kSlice, {.idleWeight = true, .quotaPeriod = std::chrono::seconds(1)});
    REQUIRE(fallback.ok());
    const auto starts = old.callsTo("startTransientUnit");
    REQUIRE(starts.size() == 3);
    CHECK(cpuWeightIs(starts[0], 0));
    CHECK(cpuWeightIs(starts[1], 1));
    CHECK(cpuWeightIs(starts[2], 1));
    CHECK_FALSE(nicer::test::hasProperty(starts[2].props, "CPUQuotaPeriodUSec"));
    CHECK((*fallback)->bandwidthWindow() == nicer::actuator::kSystemdQuotaPeriod);
    old.fail("setUnitProperties", "Cannot set property CPUQuotaPeriodUSec, or unknown property.");
    const auto refused = (*fallback)->setBandwidthWindow(std::chrono::seconds(1));
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("bandwidth window") && Catch::Contains("1000 ms"));
    CHECK((*fallback)->bandwidthWindow() == nicer::actuator::kSystemdQuotaPeriod);
}

TEST_CASE("create() reports systemd's error when the slice cannot be started at all",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    units.fail("startTransientUnit", "Access denied");
    const auto created = SystemdSliceActuator::create(units, hybridLayout(tree), kSlice);
    REQUIRE_FALSE(created.ok());
    CHECK_THAT(created.error().message, Catch::Contains("Access denied"));
    // Without a unit file of its own there is nothing else to start.
    CHECK(units.callsTo("startUnit").empty());
}

TEST_CASE("create() starts a nicer.slice that systemd loads from a unit file, with nicer's properties",
          "[SystemdSliceActuator]") {
    // StartTransientUnit is refused for a unit with a file (the user's own nicer.slice, say): the file's
    // slice is given nicer's properties at runtime and started instead.
    const TempTree tree;
    FakeUnitManager units;
    units.unit(kSlice).hasFile = true;
    const auto actuator = createActuator(units, hybridLayout(tree));

    CHECK(actionNames(units) == std::vector<std::string>{"startTransientUnit", "startTransientUnit",
                                                         "setUnitProperties", "startUnit"});
    const auto sets = units.callsTo("setUnitProperties");
    REQUIRE(sets.size() == 1);
    CHECK(cpuWeightIs(sets[0], 0));
    CHECK(propertyValue<std::uint64_t>(sets[0].props, "CPUQuotaPerSecUSec") == kMinQuotaPerSecUSec);
    CHECK(units.callsTo("startUnit").at(0).wait);
    CHECK(actuator->cgroup() == "/nicer.slice");
}

TEST_CASE("create() says which unit file it could not start", "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    units.unit(kSlice).hasFile = true;
    units.fail("startUnit", "Unit nicer.slice has a bad unit file setting.");
    const auto created = SystemdSliceActuator::create(units, hybridLayout(tree), kSlice);
    REQUIRE_FALSE(created.ok());
    CHECK_THAT(created.error().message,
               Catch::Contains("cannot start nicer.slice from its unit file /home/user/.config/systemd/user/"
                               "nicer.slice: Unit nicer.slice has a bad unit file setting."));
}

TEST_CASE("create() takes over a slice left active by a previous run", "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    const std::string cgroup = "/user.slice/user-1000.slice/user@1000.service/nicer.slice";
    tree.write("v2" + cgroup + "/cpu.max", "10000 100000\n");
    units.unit(kSlice).activeState = nicer::usermanager::UnitState::Active;
    units.unit(kSlice).controlGroup = cgroup;

    // Pure cgroup v2: cpu.max on the one tree.
    const auto actuator = createActuator(units, parseLayout(tree.mountLine("v2", "cgroup2", "rw")));
    CHECK(units.callsTo("startTransientUnit").empty());
    const auto sets = units.callsTo("setUnitProperties");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].unit == kSlice);
    CHECK(cpuWeightIs(sets[0], 0));
    CHECK(propertyValue<bool>(sets[0].props, "CPUAccounting") == true);
    CHECK(actuator->cgroup() == cgroup);
}

TEST_CASE("create() thaws a slice that a daemon which died while frozen left behind",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    activeSlice(units);
    const auto layout = hybridLayout(tree);
    tree.write("unified/nicer.slice/cgroup.freeze", "1\n");
    const auto actuator = createActuator(units, layout);
    CHECK(tree.read("unified/nicer.slice/cgroup.freeze") == "0\n");
    CHECK(units.callsTo("thawUnit").size() == 1);
    const auto kills = units.callsTo("killUnit");
    REQUIRE(kills.size() == 1);
    CHECK(kills[0].signal == SIGCONT);
    CHECK_FALSE(actuator->frozen());
}

TEST_CASE("create() fails, naming the cpu controller, when the slice's cgroup has no quota file",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    CgroupLayout layout = parseLayout(tree.mountLine("v2", "cgroup2", "rw"));
    SECTION("cgroup v2 without cpu.max") {
        tree.write("v2/nicer.slice/cgroup.procs", "");
    }
    SECTION("cgroup v1 without cpu.cfs_quota_us") {
        tree.write("cpu/nicer.slice/tasks", "");
        layout = parseLayout(tree.mountLine("cpu", "cgroup", "rw,cpu"));
    }
    const auto created = SystemdSliceActuator::create(units, layout, kSlice);
    REQUIRE_FALSE(created.ok());
    CHECK_THAT(created.error().message, Catch::Contains("cpu controller") && Catch::Contains(kSlice));
    // The slice it started is not left behind for the next actuator to trip over.
    const auto stops = units.callsTo("stopUnit");
    REQUIRE(stops.size() == 1);
    CHECK(stops[0].unit == kSlice);
    CHECK(units.unit(kSlice).activeState == nicer::usermanager::UnitState::Inactive);
}

TEST_CASE("apply() sends CPUQuotaPerSecUSec = quota x CPUs x 1 s, only when it changes",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    const auto actuator = createActuator(units, hybridLayout(tree));

    SECTION("a new value is sent once, not waited for, an equal one not at all") {
        REQUIRE(actuator->apply(0.5, 2).ok());
        const auto sets = units.callsTo("setUnitPropertiesAsync");
        REQUIRE(sets.size() == 1);
        CHECK(sets[0].unit == kSlice);
        REQUIRE(sets[0].props.size() == 1);
        CHECK(propertyValue<std::uint64_t>(sets[0].props, "CPUQuotaPerSecUSec") == 1'000'000);

        REQUIRE(actuator->apply(0.25, 4).ok()); // the same 1 s of CPU per second
        REQUIRE(actuator->apply(0.5, 2).ok());
        CHECK(quotasSent(units) == std::vector<std::uint64_t>{1'000'000});

        REQUIRE(actuator->apply(0.3, 4).ok());
        REQUIRE(actuator->apply(1.0, 4).ok());
        CHECK(quotasSent(units) == std::vector<std::uint64_t>{1'000'000, 1'200'000, 4'000'000});
        CHECK(units.callsTo("freezeUnit").empty());
        CHECK_FALSE(actuator->frozen());
    }
    SECTION("tiny quotas are floored at the smallest quota the kernel takes") {
        REQUIRE(actuator->apply(0.5, 2).ok());
        REQUIRE(actuator->apply(0.001, 2).ok()); // 2000 µs
        CHECK(quotasSent(units) == std::vector<std::uint64_t>{1'000'000, kMinQuotaPerSecUSec});
        REQUIRE(actuator->apply(0.0001, 4).ok()); // 400 µs: still the floor, so nothing to send
        CHECK(quotasSent(units).size() == 2);
        CHECK(units.callsTo("freezeUnit").empty());
    }
    SECTION("the slice starts at the floor, so a tiny first quota sends nothing") {
        REQUIRE(actuator->apply(0.001, 1).ok());
        CHECK(quotasSent(units).empty());
    }
    SECTION("a write systemd refused is reported in the next period, and sent again") {
        units.fail("setUnitPropertiesAsync", "Connection timed out");
        REQUIRE(actuator->apply(0.5, 2).ok()); // not waited for
        units.clearFailure("setUnitPropertiesAsync");
        const auto failed = actuator->apply(0.5, 2);
        REQUIRE_FALSE(failed.ok());
        CHECK_THAT(failed.error().message, Catch::Contains("Connection timed out"));
        CHECK(quotasSent(units) == std::vector<std::uint64_t>{1'000'000, 1'000'000});
        REQUIRE(actuator->apply(0.5, 2).ok());
        CHECK(quotasSent(units).size() == 2);
    }
}

TEST_CASE("quota 0 freezes the slice through systemd's FreezeUnit first", "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    const auto actuator = createActuator(units, hybridLayout(tree));
    REQUIRE(actuator->apply(0.5, 2).ok());

    REQUIRE(actuator->apply(0.0, 2).ok());
    CHECK(actuator->frozen());
    CHECK(actuator->freezeMethod() == SystemdSliceActuator::FreezeMethod::Systemd);
    CHECK(units.unit(kSlice).frozen);
    CHECK(tree.read("unified/nicer.slice/cgroup.freeze") == "0\n"); // systemd did it, not nicer
    CHECK(units.callsTo("killUnit").empty());

    // systemd's freeze holds new children too: no further call while it stays frozen.
    REQUIRE(actuator->apply(0.0, 2).ok());
    REQUIRE(actuator->apply(-0.1, 2).ok());
    CHECK(units.callsTo("freezeUnit").size() == 1);

    SECTION("a lower quota is set BEFORE the thaw, so the work never runs above it") {
        const auto before = units.actions().size();
        REQUIRE(actuator->apply(0.25, 2).ok());
        CHECK(actionNames(units, before) == std::vector<std::string>{"setUnitProperties", "thawUnit"});
        CHECK(quotasSent(units).back() == 500'000);
        CHECK_FALSE(actuator->frozen());
        CHECK_FALSE(units.unit(kSlice).frozen);
    }
    SECTION("the same quota as before the freeze only thaws") {
        const auto before = units.actions().size();
        REQUIRE(actuator->apply(0.5, 2).ok());
        CHECK(actionNames(units, before) == std::vector<std::string>{"thawUnit"});
        CHECK_FALSE(actuator->frozen());
    }
    SECTION("a failed thaw leaves it frozen, and the next period tries again") {
        units.fail("thawUnit", "Connection timed out");
        CHECK_FALSE(actuator->apply(0.5, 2).ok());
        CHECK(actuator->frozen());
        units.clearFailure("thawUnit");
        REQUIRE(actuator->apply(0.5, 2).ok());
        CHECK_FALSE(actuator->frozen());
        CHECK(units.callsTo("thawUnit").size() == 2);
    }
}

TEST_CASE("quota 0 falls back to cgroup.freeze only when neither FreezeUnit nor KillUnit works",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    units.fail("freezeUnit", "Unit 'nicer.slice' does not support freezing");
    units.fail("killUnit", "Access denied");
    const auto actuator = createActuator(units, hybridLayout(tree));
    REQUIRE(actuator->apply(0.5, 2).ok());

    REQUIRE(actuator->apply(0.0, 2).ok());
    CHECK(actuator->frozen());
    CHECK(actuator->freezeMethod() == SystemdSliceActuator::FreezeMethod::CgroupFreeze);
    CHECK(tree.read("unified/nicer.slice/cgroup.freeze") == "1\n");

    // The kernel's freeze holds new children too, and systemd is not asked again once it said no.
    REQUIRE(actuator->apply(0.0, 2).ok());
    CHECK(units.callsTo("freezeUnit").size() == 1);

    REQUIRE(actuator->apply(0.3, 2).ok());
    CHECK(tree.read("unified/nicer.slice/cgroup.freeze") == "0\n");
    CHECK_FALSE(actuator->frozen());
    CHECK(quotasSent(units).back() == 600'000);
    CHECK(units.callsTo("thawUnit").empty());
}

TEST_CASE("without FreezeUnit, the slice is stopped with SIGSTOP through KillUnit, which systemd undoes "
          "when it stops the work",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    units.fail("freezeUnit", "Unit 'nicer.slice' does not support freezing");
    CgroupLayout layout = v1OnlyLayout(tree);
    SECTION("pure cgroup v1: no v2 tree at all") {}
    SECTION("hybrid: cgroup.freeze exists, but systemd would not thaw it after nicerd died") {
        layout = hybridLayout(tree);
    }
    SECTION("hybrid on a kernel without cgroup.freeze") {
        layout = hybridLayout(tree, false);
    }
    const auto actuator = createActuator(units, layout);
    REQUIRE(actuator->apply(0.5, 2).ok());

    const auto before = units.actions().size();
    REQUIRE(actuator->apply(0.0, 2).ok());
    CHECK(actuator->frozen());
    CHECK(actuator->freezeMethod() == SystemdSliceActuator::FreezeMethod::Sigstop);
    CHECK(actionNames(units, before) ==
          std::vector<std::string>{"freezeUnit", "killUnit:" + std::to_string(SIGSTOP)});
    CHECK(units.callsTo("killUnit").back().unit == kSlice);

    // SIGSTOP only stops the processes there are: it is sent again every period, so restarts stop too.
    REQUIRE(actuator->apply(0.0, 2).ok());
    REQUIRE(actuator->apply(0.0, 2).ok());
    const auto kills = units.callsTo("killUnit");
    REQUIRE(kills.size() == 3);
    for (const auto& kill : kills) {
        CHECK(kill.signal == SIGSTOP);
    }
    CHECK(units.callsTo("freezeUnit").size() == 1);

    const auto beforeThaw = units.actions().size();
    REQUIRE(actuator->apply(0.25, 2).ok());
    CHECK(actionNames(units, beforeThaw) ==
          std::vector<std::string>{"setUnitProperties", "killUnit:" + std::to_string(SIGCONT)});
    CHECK(quotasSent(units).back() == 500'000);
    CHECK_FALSE(actuator->frozen());
    CHECK(units.callsTo("thawUnit").empty());
}

TEST_CASE("a freeze that no method manages is an error and the slice counts as running",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    units.fail("freezeUnit", "Unit 'nicer.slice' does not support freezing");
    units.fail("killUnit", "Access denied");
    const auto actuator = createActuator(units, v1OnlyLayout(tree));

    const auto frozen = actuator->apply(0.0, 2);
    REQUIRE_FALSE(frozen.ok());
    CHECK_THAT(frozen.error().message, Catch::Contains("cannot freeze") && Catch::Contains(kSlice) &&
                                           Catch::Contains("Access denied"));
    CHECK_FALSE(actuator->frozen());
}

TEST_CASE("workCpuNSec uses CPUUsageNSec and falls back to the v2 tree's cpu.stat",
          "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;
    const auto actuator = createActuator(units, hybridLayout(tree));
    tree.write("unified/nicer.slice/cpu.stat", "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n");

    units.unit(kSlice).cpuUsageNSec = 42'000'000'123;
    auto usage = actuator->workCpuNSec();
    REQUIRE(usage.ok());
    CHECK(*usage == 42'000'000'123);

    SECTION("systemd does not account it") {
        units.unit(kSlice).cpuUsageNSec = nicer::usermanager::kNoUsage;
    }
    SECTION("systemd cannot be asked") {
        units.fail("cpuUsageNSec", "Connection timed out");
    }
    usage = actuator->workCpuNSec();
    REQUIRE(usage.ok());
    CHECK(*usage == 1'234'567'000);

    tree.write("unified/nicer.slice/cpu.stat", "user_usec 1000000\n");
    const auto broken = actuator->workCpuNSec();
    REQUIRE_FALSE(broken.ok());
    CHECK_THAT(broken.error().message, Catch::Contains("usage_usec"));
}

TEST_CASE("release() thaws a frozen slice and does nothing to a running one", "[SystemdSliceActuator]") {
    const TempTree tree;
    FakeUnitManager units;

    SECTION("frozen by systemd") {
        const auto actuator = createActuator(units, hybridLayout(tree));
        REQUIRE(actuator->release().ok());
        CHECK(units.callsTo("thawUnit").empty());

        REQUIRE(actuator->apply(0.0, 2).ok());
        REQUIRE(actuator->release().ok());
        CHECK(units.callsTo("thawUnit").size() == 1);
        CHECK_FALSE(actuator->frozen());
        CHECK_FALSE(units.unit(kSlice).frozen);
        REQUIRE(actuator->release().ok());
        CHECK(units.callsTo("thawUnit").size() == 1);
    }
    SECTION("stopped with SIGSTOP") {
        units.fail("freezeUnit", "Unit 'nicer.slice' does not support freezing");
        const auto actuator = createActuator(units, v1OnlyLayout(tree));
        REQUIRE(actuator->apply(0.0, 2).ok());
        REQUIRE(actuator->release().ok());
        const auto kills = units.callsTo("killUnit");
        REQUIRE(kills.size() == 2);
        CHECK(kills.back().signal == SIGCONT);
        CHECK_FALSE(actuator->frozen());
    }
}

namespace {

/// The hybrid layout with @p work as the slice's one process, for the fail-safe's real signals.
CgroupLayout hybridLayoutHolding(const TempTree& tree, const nicer::test::ChildProcess& work) {
    auto layout = hybridLayout(tree);
    tree.write("unified/nicer.slice/cgroup.procs", std::to_string(work.pid()) + "\n");
    return layout;
}

/// Whether @p work comes to be stopped (or running, with @p stopped false) within a bound on a stuck state.
bool becomes(const nicer::test::ChildProcess& work, bool stopped) {
    return nicer::test::pollUntil([&] { return (work.state() == 'T') == stopped; }, std::chrono::seconds(10),
                                  std::chrono::milliseconds(5));
}

} // namespace

TEST_CASE("when systemd cannot be reached, the work is held with SIGSTOP until it answers again",
          "[SystemdSliceActuator][failsafe]") {
    const TempTree tree;
    FakeUnitManager units;
    const nicer::test::ChildProcess work;
    const auto actuator = createActuator(units, hybridLayoutHolding(tree, work));
    REQUIRE(actuator->apply(0.5, 2).ok());
    CHECK(work.state() != 'T');

    // The bus is gone: neither the cap nor systemd's freezer can be changed.
    for (const char* method :
         {"setUnitProperties", "setUnitPropertiesAsync", "freezeUnit", "thawUnit", "killUnit"}) {
        units.fail(method, "Connection reset by peer");
    }
    // (A freeze in this outage goes through cgroup.freeze, which needs no bus either.)
    // The new quota's write is not waited for: its failure comes with the next period.
    REQUIRE(actuator->apply(0.3, 2).ok());
    const auto applied = actuator->apply(0.3, 2);
    REQUIRE_FALSE(applied.ok());
    CHECK_THAT(applied.error().message,
               Catch::Contains("Connection reset by peer") && Catch::Contains("the work is held (SIGSTOP)"));
    CHECK(actuator->heldWithoutSystemd());
    CHECK(actuator->frozen());
    CHECK(becomes(work, true));

    // The hold lasts until systemd has taken a quota: the one sent again in the outage was refused too, the
    // next one is taken.
    for (const char* method :
         {"setUnitProperties", "setUnitPropertiesAsync", "freezeUnit", "thawUnit", "killUnit"}) {
        units.clearFailure(method);
    }
    REQUIRE_FALSE(actuator->apply(0.4, 2).ok());
    CHECK(actuator->heldWithoutSystemd());
    REQUIRE(actuator->apply(0.4, 2).ok());
    CHECK_FALSE(actuator->heldWithoutSystemd());
    CHECK_FALSE(actuator->frozen());
    CHECK(quotasSent(units).back() == 800'000);
    CHECK(becomes(work, false));
}

TEST_CASE("release() continues work the fail-safe held", "[SystemdSliceActuator][failsafe]") {
    const TempTree tree;
    FakeUnitManager units;
    const nicer::test::ChildProcess work;
    const auto actuator = createActuator(units, hybridLayoutHolding(tree, work));
    units.fail("setUnitPropertiesAsync", "Connection reset by peer");
    REQUIRE(actuator->apply(0.3, 2).ok());
    REQUIRE_FALSE(actuator->apply(0.3, 2).ok());
    REQUIRE(becomes(work, true));
    REQUIRE(actuator->release().ok());
    CHECK(becomes(work, false));
    CHECK_FALSE(actuator->frozen());
}

TEST_CASE("a held work continues only once systemd has answered the quota sent again",
          "[SystemdSliceActuator][failsafe]") {
    const TempTree tree;
    FakeUnitManager units;
    const nicer::test::ChildProcess work;
    const auto actuator = createActuator(units, hybridLayoutHolding(tree, work));
    units.fail("setUnitPropertiesAsync", "Method call timed out");
    REQUIRE(actuator->apply(0.3, 2).ok());
    units.clearFailure("setUnitPropertiesAsync");
    REQUIRE_FALSE(actuator->apply(0.3, 2).ok());
    REQUIRE(becomes(work, true));

    // A slow manager: the quota sent again has no answer yet, so the work stays held, and nothing new is sent
    // while the value is the same.
    units.writesPending = true;
    REQUIRE(actuator->apply(0.3, 2).ok());
    CHECK(actuator->heldWithoutSystemd());
    CHECK(quotasSent(units) == std::vector<std::uint64_t>{600'000, 600'000});
    units.writesPending = false;
    REQUIRE(actuator->apply(0.3, 2).ok());
    CHECK_FALSE(actuator->heldWithoutSystemd());
    CHECK(becomes(work, false));
}
