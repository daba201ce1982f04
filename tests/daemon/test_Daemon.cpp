// The Daemon in this process, against a REAL systemd user manager (the CTest fixture starts one), with a
// recording observer in place of its D-Bus service: the start-up order (the bus first, no unit before it),
// the samples it reports each period, and the fail-safe stop. nicerd as a program is tested in
// tests/integration/test_nicerd.cpp.
#include "Poll.h"
#include "daemon/Daemon.h"
#include "kernel/CgroupLayout.h"
#include "libsystemd/ExitSignals.h"
#include "usermanager/SystemdUnitManager.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace nicer;
using namespace std::chrono_literals;

namespace {

/// What the daemon told its observer, readable from the test's thread while the loop runs in another.
struct Recorded {
    std::mutex mutex;
    std::vector<api::Sample> samples;
    sd_bus* bus = nullptr;
    daemon::DaemonControl* control = nullptr;

    std::size_t count() {
        const std::lock_guard lock(mutex);
        return samples.size();
    }
};

class RecordingObserver final : public daemon::DaemonObserver {
public:
    explicit RecordingObserver(Recorded& recorded)
        : m_recorded(recorded) {}
    void onSample(const api::Sample& sample) override {
        const std::lock_guard lock(m_recorded.mutex);
        m_recorded.samples.push_back(sample);
    }
    void onStateChanged() override {}

private:
    Recorded& m_recorded;
};

daemon::PublishDaemon recordingPublisher(Recorded& recorded) {
    return [&recorded](sd_bus* bus,
                       daemon::DaemonControl& control) -> Result<std::unique_ptr<daemon::DaemonObserver>> {
        recorded.bus = bus;
        recorded.control = &control;
        return std::unique_ptr<daemon::DaemonObserver>(std::make_unique<RecordingObserver>(recorded));
    };
}

/// A config of its own: a slice no other test uses, state in a fresh directory, `sleep` as the work.
daemon::DaemonConfig testConfig(const std::string& name) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("nicer-daemon-test-" + std::to_string(::getpid())) / name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    daemon::DaemonConfig config;
    config.params.period = 100ms;
    config.command = {"sleep", "1000"};
    config.instances = 2;
    config.slice = "nicertest-daemon-" + std::to_string(::getpid()) + "-" + name + ".slice";
    config.workloadFile = dir / "workload.conf";
    config.parameterFile = dir / "parameters.conf";
    config.dataDir = dir / "data";
    return config;
}

usermanager::SystemdUnitManager& units() {
    static auto manager = usermanager::SystemdUnitManager::connectUser();
    REQUIRE(manager.ok());
    return **manager;
}

/// The processes in @p slice right now; empty when it has none or does not exist.
std::vector<pid_t> slicePids(const std::string& slice) {
    static const auto layout = kernel::CgroupLayout::detect();
    REQUIRE(layout.ok());
    const auto cgroup = units().controlGroup(slice);
    if (!cgroup || cgroup->empty()) {
        return {};
    }
    const auto pids = layout->readPids(*cgroup);
    return pids ? *pids : std::vector<pid_t>{};
}

} // namespace

TEST_CASE("a daemon whose publishing fails stops there, before it starts any unit", "[daemon]") {
    auto config = testConfig("publish-fails");
    const auto slice = config.slice;
    bool asked = false;
    auto publish = [&](sd_bus* bus,
                       daemon::DaemonControl&) -> Result<std::unique_ptr<daemon::DaemonObserver>> {
        asked = true;
        CHECK(bus != nullptr);
        return Error{"another nicerd is already running for this user (test)"};
    };
    const auto daemon = daemon::Daemon::create(std::move(config), publish);
    REQUIRE_FALSE(daemon.ok());
    CHECK(asked);
    CHECK(daemon.error().message == "another nicerd is already running for this user (test)");
    // Nothing was started: no slice, no work, no scope for this process.
    const auto state = units().activeState(slice);
    REQUIRE(state.ok());
    CHECK(*state == nicer::usermanager::UnitState::Inactive);
    CHECK(slicePids(slice).empty());
    const auto scope = units().activeState("nicerd-" + std::to_string(::getpid()) + ".scope");
    REQUIRE(scope.ok());
    CHECK(*scope == nicer::usermanager::UnitState::Inactive);
}

TEST_CASE("the daemon reports a sample each period to its observer and stops the work on SIGTERM",
          "[daemon]") {
    auto config = testConfig("runs");
    const auto slice = config.slice;
    Recorded recorded;
    // As nicerd does: SIGTERM blocked before the daemon starts (the loop's thread inherits the mask), so the
    // signal, sent to the process, waits for the loop's signalfd, where it ends the loop.
    libsystemd::blockSignals({SIGTERM});
    auto created = daemon::Daemon::create(std::move(config), recordingPublisher(recorded));
    INFO((created.ok() ? std::string() : created.error().message));
    REQUIRE(created.ok());
    auto daemon = std::move(*created);
    CHECK(recorded.bus != nullptr);
    CHECK(recorded.control == daemon.get());
    CHECK(daemon->state().instances == 2);
    CHECK(slicePids(slice).size() == 2);
    auto stopSignals = libsystemd::exitOnSignals(daemon->event(), {SIGTERM});
    REQUIRE(stopSignals.ok());

    std::atomic<int> exitStatus{-1};
    std::thread loop([&] { exitStatus = daemon->run(); });
    const bool sampled = test::pollUntil([&] { return recorded.count() >= 5; }, 20s);
    REQUIRE(::kill(::getpid(), SIGTERM) == 0);
    loop.join();
    CHECK(sampled);
    CHECK(exitStatus == EXIT_SUCCESS);
    {
        const std::lock_guard lock(recorded.mutex);
        for (std::size_t i = 1; i < recorded.samples.size(); ++i) {
            const auto& s = recorded.samples[i];
            CHECK(s.timeUSec > recorded.samples[i - 1].timeUSec);
            CHECK_FALSE(s.paused);
            CHECK(s.quota >= 0.0);
            CHECK(s.quota <= 1.0);
        }
    }
    // run() shut down: the work is stopped, and the slice with it.
    CHECK(test::pollUntil([&] { return slicePids(slice).empty(); }, 10s));
    daemon.reset();
    const auto state = units().activeState(slice);
    REQUIRE(state.ok());
    CHECK(*state == nicer::usermanager::UnitState::Inactive);
}
