// SystemdUnitManager and the slice actuator against a stand-in systemd on a private bus (FakeSystemd) that
// takes its time: jobs are waited for by their JobRemoved, and nicerd's loop goes on while the manager sits
// on the quota of a period. The real manager's behaviour is tests/usermanager/test_SystemdUnitManager.cpp's.

#include "EventLoop.h"
#include "actuator/SystemdSliceActuator.h"
#include "dbus/PrivateBus.h"
#include "fakes/FakeCgroupTree.h"
#include "libsystemd/Timer.h"
#include "usermanager/FakeSystemd.h"
#include "usermanager/SystemdUnitManager.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace nicer;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::FakeSystemd;
using usermanager::SystemdUnitManager;

namespace {

/// The time @p body takes.
template <typename Body>
Clock::duration timed(Body&& body) {
    const auto start = Clock::now();
    body();
    return Clock::now() - start;
}

/// nicerd's own D-Bus object, as a stand-in: a method on a connection of its own, served by @p event.
class PingService {
public:
    PingService(libsystemd::BusPtr bus, sd_event* event)
        : m_bus(std::move(bus)) {
        static const sd_bus_vtable vtable[] = {
            SD_BUS_VTABLE_START(0),
            SD_BUS_METHOD("Ping", "", "s", &PingService::ping, 0),
            SD_BUS_VTABLE_END,
        };
        sd_bus_slot* slot = nullptr;
        REQUIRE(sd_bus_add_object_vtable(m_bus.get(), &slot, "/test", "org.nicer.Test", vtable, nullptr) >=
                0);
        m_slot.reset(slot);
        REQUIRE(sd_bus_request_name(m_bus.get(), "org.nicer.Test", 0) >= 0);
        REQUIRE(sd_bus_attach_event(m_bus.get(), event, SD_EVENT_PRIORITY_NORMAL) >= 0);
    }
    ~PingService() { sd_bus_detach_event(m_bus.get()); }
    PingService(const PingService&) = delete;
    PingService& operator=(const PingService&) = delete;

private:
    static int ping(sd_bus_message* call, void*, sd_bus_error*) {
        return sd_bus_reply_method_return(call, "s", "pong");
    }

    libsystemd::BusPtr m_bus;
    libsystemd::BusSlotPtr m_slot;
};

/// A client of the PingService in a thread of its own: calls it every kPingInterval, keeps the slowest answer
/// (or the wait of a call not answered yet, if longer).
class PingClient {
    /// The pace of the calls, not a wait for anything: each call is timed on its own, and the checks count
    /// answers and their longest wait, never what a pause would let happen.
    static constexpr auto kPingInterval = 50ms;

public:
    explicit PingClient(libsystemd::BusPtr bus)
        : m_bus(std::move(bus)) {
        sd_bus_set_method_call_timeout(m_bus.get(), 3'000'000); // a blocked loop does not keep the test
        m_thread = std::thread([this] { run(); });
    }
    ~PingClient() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_paced.notify_all();
        m_thread.join();
    }
    PingClient(const PingClient&) = delete;
    PingClient& operator=(const PingClient&) = delete;

    int answered() const { return m_answered; }
    int failed() const { return m_failed; }
    std::chrono::milliseconds slowest() const {
        auto slowest = m_slowest.load();
        if (const auto since = m_callSince.load(); since != Clock::duration::zero()) {
            slowest = std::max(slowest, Clock::now().time_since_epoch() - since);
        }
        return std::chrono::duration_cast<std::chrono::milliseconds>(slowest);
    }

private:
    void run() {
        while (!m_stop) {
            m_callSince = Clock::now().time_since_epoch();
            const auto took = timed([&] {
                if (sd_bus_call_method(m_bus.get(), "org.nicer.Test", "/test", "org.nicer.Test", "Ping",
                                       nullptr, nullptr, "") >= 0) {
                    ++m_answered;
                } else {
                    ++m_failed;
                }
            });
            m_callSince = Clock::duration::zero();
            m_slowest = std::max(m_slowest.load(), took);
            std::unique_lock lock(m_mutex);
            m_paced.wait_for(lock, kPingInterval, [this] { return m_stop.load(); });
        }
    }

    libsystemd::BusPtr m_bus;
    std::atomic<bool> m_stop{false};
    std::mutex m_mutex; ///< with m_paced: the pace between calls ends at once on stop
    std::condition_variable m_paced;
    std::atomic<int> m_answered{0};
    std::atomic<int> m_failed{0};
    std::atomic<Clock::duration> m_slowest{Clock::duration::zero()};
    std::atomic<Clock::duration> m_callSince{Clock::duration::zero()}; ///< zero between calls
    std::thread m_thread;
};

/// Runs @p event until nicer.slice's writes of @p property are answered; the failure told on the way, taken
/// as it comes (runLoopUntil asks once more at the end, and a failure is told once). nullopt: no answer in 5
/// s.
std::optional<Result<void>> answerOf(sd_event* event, SystemdUnitManager& units,
                                     const std::string& property) {
    Result<void> answer;
    const bool answered = test::runLoopUntil(
        event,
        [&] {
            auto writes = units.takePropertyWrites("nicer.slice", property);
            if (!writes.failure) {
                answer = writes.failure;
            }
            return !writes.pending;
        },
        5s);
    if (!answered) {
        return std::nullopt;
    }
    return answer;
}

} // namespace

TEST_CASE("a waited-for start returns once systemd sent its job's JobRemoved", "[SlowUserManager]") {
    const dbus::test::PrivateBus bus;
    FakeSystemd systemd(bus.connect());
    SystemdUnitManager units(bus.connect());
    // No job objects in the fake: polling a job's State would find it gone at once.
    systemd.setJobDelay(400ms);

    const auto took = timed([&] { REQUIRE(units.startTransientUnit("work.service", {}, true).ok()); });
    CHECK(took >= 400ms);
    CHECK(systemd.activeState("work.service") == "active");

    const auto stopped = timed([&] { REQUIRE(units.stopUnit("work.service", true).ok()); });
    CHECK(stopped >= 400ms);
    CHECK(systemd.activeState("work.service") == "inactive");
    // Subscribed to once, for the connection.
    CHECK(systemd.subscriptions() == 1);

    // Not waited for: back at once.
    const auto unwaited = timed([&] { REQUIRE(units.startTransientUnit("work.service", {}, false).ok()); });
    CHECK(unwaited < 400ms);
}

TEST_CASE("a job that ends before its call is answered is not missed", "[SlowUserManager]") {
    const dbus::test::PrivateBus bus;
    FakeSystemd systemd(bus.connect());
    SystemdUnitManager units(bus.connect());
    systemd.setJobEndsBeforeReply(true);
    // Its JobRemoved comes before the job's path is known: seen, because the match was made before the call
    // (the wait would otherwise last its 30 s).
    const auto took = timed([&] { REQUIRE(units.startTransientUnit("early.service", {}, true).ok()); });
    CHECK(took < 5s);
    CHECK(systemd.activeState("early.service") == "active");
}

TEST_CASE("a start job that fails is an error that says how the job ended", "[SlowUserManager]") {
    const dbus::test::PrivateBus bus;
    FakeSystemd systemd(bus.connect());
    SystemdUnitManager units(bus.connect());
    systemd.setJobResult("failed");
    const auto started = units.startTransientUnit("broken.service", {}, true);
    REQUIRE_FALSE(started.ok());
    CHECK_THAT(started.error().message, Catch::Contains("StartTransientUnit(broken.service)") &&
                                            Catch::Contains("failed to start") &&
                                            Catch::Contains("the job ended \"failed\""));
}

TEST_CASE("while the manager sits on a period's quota for 5 s, the period and the loop's bus answers go on, "
          "and the latest quota is written next",
          "[SlowUserManager]") {
    const dbus::test::PrivateBus bus;
    FakeSystemd systemd(bus.connect());
    const test::FakeCgroupTree tree;
    tree.write("v2/nicer.slice/cpu.max", "max 100000\n");
    tree.write("v2/nicer.slice/cgroup.procs", "");
    auto layout = kernel::CgroupLayout::parse(tree.mountLine("v2", "cgroup2", "rw,nsdelegate"));
    REQUIRE(layout.ok());

    // nicerd's loop, with the user manager's connection and nicerd's own service on it.
    const auto loop = test::newLoop();
    SystemdUnitManager units(bus.connect());
    REQUIRE(units.attach(loop.get()).ok());
    auto created = actuator::SystemdSliceActuator::create(units, *layout, "nicer.slice");
    INFO((created ? std::string() : created.error().message));
    REQUIRE(created.ok());
    auto& slice = **created;
    const PingService service(bus.connect(), loop.get());

    // From now on the manager answers a quota after 5 s, and takes 5 s over a job.
    systemd.setWriteDelay(5s);
    systemd.setJobDelay(5s);
    const auto quotasBefore = systemd.quotasReceived().size();
    auto quotaOf = [](int period) { return 0.10 + 0.01 * period; };

    // nicerd's period, 250 ms on a fixed schedule: a new quota every time, and in the first, a work instance
    // started as WorkloadSupervisor::poll() restarts one (not waited for).
    constexpr auto kPeriod = 250ms;
    constexpr int kPeriods = 10;
    std::vector<Clock::time_point> ticks;
    std::vector<std::string> failures;
    libsystemd::Timer period;
    auto timer = libsystemd::Timer::create(loop.get(), [&] {
        ticks.push_back(Clock::now());
        const int n = static_cast<int>(ticks.size());
        if (auto applied = slice.apply(quotaOf(n), 1); !applied) {
            failures.push_back(applied.error().message);
        }
        if (n == 1) {
            if (auto started = units.startTransientUnit("nicer-work-1.service", {}, false); !started) {
                failures.push_back(started.error().message);
            }
        }
        if (n < kPeriods) {
            period.armAt(period.due() + kPeriod);
        }
    });
    REQUIRE(timer.ok());
    period = std::move(*timer);

    const auto start = Clock::now();
    period.armIn(kPeriod);
    {
        const PingClient client(bus.connect());
        test::runLoopUntil(
            loop.get(), [&] { return Clock::now() - start >= 2600ms; }, 10s);
        const auto onTime = std::count_if(ticks.begin(), ticks.end(),
                                          [&](Clock::time_point t) { return t - start <= 2600ms; });
        INFO("periods by 2.6 s: " << onTime);
        CHECK(onTime >= 8);
        INFO("the slowest answer of the loop's own service: " << client.slowest().count() << " ms");
        CHECK(client.answered() >= 10);
        CHECK(client.failed() == 0);
        CHECK(client.slowest() < kPeriod);
    }
    CHECK(failures.empty());
    // One write on its way, the newer quotas queued behind it in one.
    CHECK(systemd.quotasReceived().size() == quotasBefore + 1);
    CHECK_FALSE(slice.heldWithoutSystemd());

    // The manager answers the first after its 5 s; the latest quota goes next (answered at once now).
    systemd.setWriteDelay(0ms);
    const auto latest = actuator::quotaPerSecUSec(quotaOf(kPeriods), 1);
    REQUIRE(test::runLoopUntil(
        loop.get(), [&] { return systemd.quotaInForce() == latest; }, 10s));
    const auto received = systemd.quotasReceived();
    REQUIRE(received.size() == quotasBefore + 2);
    CHECK(received[quotasBefore] == actuator::quotaPerSecUSec(quotaOf(1), 1));
    CHECK(received[quotasBefore + 1] == latest);
    const auto answered = answerOf(loop.get(), units, "CPUQuotaPerSecUSec");
    REQUIRE(answered);
    CHECK(answered->ok());
    // The next period sends nothing: that quota is in force.
    REQUIRE(slice.apply(quotaOf(kPeriods), 1).ok());
    CHECK(systemd.quotasReceived().size() == quotasBefore + 2);
}

TEST_CASE("each property written without waiting has its own answer: a MemoryHigh refused is not the quota's",
          "[SlowUserManager]") {
    const dbus::test::PrivateBus bus;
    FakeSystemd systemd(bus.connect());
    const auto loop = test::newLoop();
    SystemdUnitManager units(bus.connect());
    REQUIRE(units.attach(loop.get()).ok());
    systemd.setRefused("MemoryHigh");
    systemd.setWriteDelay(300ms);

    // The quota goes out first; MemoryHigh waits behind it, one write a unit on its way.
    const auto sent = timed([&] {
        units.setUnitPropertiesAsync("nicer.slice", {{"CPUQuotaPerSecUSec", std::uint64_t{500000}}});
        units.setUnitPropertiesAsync("nicer.slice", {{"MemoryHigh", std::uint64_t{1} << 30}});
    });
    CHECK(sent < 300ms); // neither waited for the manager
    CHECK(units.takePropertyWrites("nicer.slice", "CPUQuotaPerSecUSec").pending);
    CHECK(units.takePropertyWrites("nicer.slice", "MemoryHigh").pending);

    const auto refused = answerOf(loop.get(), units, "MemoryHigh");
    REQUIRE(refused);
    REQUIRE_FALSE(refused->ok());
    CHECK_THAT(refused->error().message, Catch::Contains("SetUnitProperties(nicer.slice)") &&
                                             Catch::Contains("Cannot set property MemoryHigh"));
    const auto quota = units.takePropertyWrites("nicer.slice", "CPUQuotaPerSecUSec");
    CHECK(quota.failure.ok());
    CHECK_FALSE(quota.pending);
    CHECK(systemd.quotaInForce() == 500000);
    // Told once.
    CHECK(units.takePropertyWrites("nicer.slice", "MemoryHigh").failure.ok());
}
