#pragma once
// For the D-Bus units' tests: a private session bus (PrivateBus.h), a fake nicerd behind
// daemon::DaemonControl, and DaemonService published on its own connection, served by a thread.

#include "PrivateBus.h"
#include "api/BusNames.h"
#include "daemon/DaemonControl.h"
#include "dbus/service/DaemonService.h"
#include "desktop/ProgramList.h"
#include "libsystemd/Bus.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace nicer::dbus::test {

/// nicerd as the service sees it: a state a test sets (state_, under the lock), and records of what the
/// service asked.
class FakeDaemon final : public daemon::DaemonControl, public daemon::BoincRequests {
public:
    FakeDaemon() {
        auto& s = state_;
        s.workload = {"md5sum", "/dev/zero"};
        s.instances = 3;
        s.demoWorkload = true;
        s.workloadPreset = "demo";
        s.workloadPresets = {{"demo", "Demo", "Burns CPU", true}, {"boinc", "BOINC", "Science", false}};
        s.cpuCount = 4;
        s.actuator = api::Actuator::SignalDutyCycle;
        s.actuatorNote = "no cpu controller: a duty cycle holds the work";
        s.placement = api::Placement::RootSlice;
        s.placementNote = "in nicer.slice (nicer-work@1000.service), directly under the root cgroup";
        s.memoryMaxPercent = 50;
        s.memoryMax = 4'294'967'296; // 4 GiB, 50% of 8 GiB
        s.signalSetting = control::Signal::Auto;
        s.lastError = "the last error";
        s.downloadRate = 1234.5;
        // The last period: as Sample{..., 0.3, 0.2, 0.5, 0.15, 0.4, 2.5, 1, false, true}.
        s.idle = 0.3;
        s.foreground = 0.2;
        s.background = 0.5;
        s.outside = 0.15;
        s.quota = 0.4;
        s.multiplier = 2.5;
        s.overloadCount = 1;
        s.signal = control::Signal::Outside;
        m_history = {api::Sample{1, 0.9, 0.1, 0.0, -1.0, 0.0, 1.0, 0, false, false, api::kNoTemperature, ""},
                     api::Sample{2, 0.1, 0.6, 0.3, 0.25, 0.3, 4.0, 2, true, true, 71.5, "temperature"}};
    }

    // The state, and what the service asked of it; under the lock (the service runs in its own thread).
    mutable std::mutex mutex;
    api::DaemonState state_;
    std::string lastPreset;
    std::string refusal; ///< when set, pause(), setWorkloadPreset() and setExclusivePrograms() fail with it
    ErrorKind refusalKind = ErrorKind::Failed; ///< the kind of that failure
    std::vector<std::string> boincRequests; ///< "attach URL KEY", "manager URL NAME PASSWORD", "detach URL"
    std::string boincRefusal;               ///< when set, the BOINC requests fail with it

    api::DaemonState state() const override {
        std::lock_guard lock(mutex);
        return state_;
    }
    const std::deque<api::Sample>& history() const override { return m_history; }
    Result<void> setParams(const control::ControllerParams& p) override {
        std::lock_guard lock(mutex);
        state_.params = p;
        return {};
    }
    Result<void> pause(daemon::PauseEnd end) override {
        std::lock_guard lock(mutex);
        if (!refusal.empty()) {
            return Error{refusal, refusalKind};
        }
        state_.paused = true;
        state_.pausedUntilUSec =
            end ? static_cast<std::uint64_t>(
                      std::chrono::duration_cast<std::chrono::microseconds>(end->time_since_epoch()).count())
                : 0;
        return {};
    }
    Result<void> resume() override {
        std::lock_guard lock(mutex);
        state_.paused = false;
        return {};
    }
    Result<void> setWorkloadPreset(const std::string& id) override {
        std::lock_guard lock(mutex);
        lastPreset = id;
        if (!refusal.empty()) {
            return Error{refusal, refusalKind};
        }
        return {};
    }
    Result<void> setExclusivePrograms(const std::vector<std::string>& names) override {
        std::lock_guard lock(mutex);
        if (!refusal.empty()) {
            return Error{refusal, refusalKind};
        }
        // The daemon's contract: a name that cannot be a program's changes nothing.
        auto checked = desktop::checkProgramList(names);
        if (!checked) {
            return checked.error();
        }
        state_.exclusivePrograms = *checked;
        return {};
    }
    daemon::BoincRequests& boinc() override { return *this; }
    void attach(const std::string& url, const std::string& key, Done done) override {
        answerBoinc("attach " + url + " " + key, std::move(done));
    }
    void attachAccountManager(const std::string& url, const std::string& name, const std::string& password,
                              Done done) override {
        answerBoinc("manager " + url + " " + name + " " + password, std::move(done));
    }
    void detach(const std::string& url, Done done) override { answerBoinc("detach " + url, std::move(done)); }

private:
    void answerBoinc(std::string request, Done done) {
        std::string refused;
        {
            std::lock_guard lock(mutex);
            boincRequests.push_back(std::move(request));
            refused = boincRefusal;
        }
        done(refused.empty() ? Result<void>{} : Result<void>{Error{refused}});
    }

    std::deque<api::Sample> m_history;
};

/// DaemonService published for @p daemon on its own connection to @p bus, served by a thread until
/// destroyed. run() executes code on the service's thread (to emit signals) between two dispatches;
/// getAllCalls() counts the Properties.GetAll calls it received for nicerd's interface.
class ServedService {
public:
    ServedService(const PrivateBus& bus, daemon::DaemonControl& daemon)
        : ServedService(bus.connect(), daemon) {}
    /// On @p bus, a connection the test made (PrivateBus::connectTo).
    ServedService(libsystemd::BusPtr bus, daemon::DaemonControl& daemon)
        : m_bus(std::move(bus)) {
        sd_bus_slot* filter = nullptr;
        REQUIRE(sd_bus_add_filter(m_bus.get(), &filter, &ServedService::countGetAll, this) >= 0);
        m_filter.reset(filter);
        auto published = DaemonService::publish(m_bus.get(), daemon);
        REQUIRE(published.ok());
        m_service = std::move(*published);
        m_thread = std::thread([this] {
            while (!m_stop) {
                {
                    std::lock_guard lock(m_mutex);
                    while (sd_bus_process(m_bus.get(), nullptr) > 0) {
                    }
                }
                sd_bus_wait(m_bus.get(), 20'000); // µs: wakes for messages, and to see m_stop
            }
        });
    }
    ~ServedService() {
        m_stop = true;
        m_thread.join();
        m_service.reset();
    }
    ServedService(const ServedService&) = delete;
    ServedService& operator=(const ServedService&) = delete;

    template <typename F>
    void run(F&& f) {
        std::lock_guard lock(m_mutex);
        f(*m_service);
        sd_bus_flush(m_bus.get());
    }

    int getAllCalls() const { return m_getAllCalls; }

private:
    /// Sees every message the service receives, before it is dispatched.
    static int countGetAll(sd_bus_message* m, void* userdata, sd_bus_error*) {
        if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "GetAll") > 0) {
            const char* interface = nullptr;
            if (sd_bus_message_read(m, "s", &interface) >= 0 && std::string(interface) == api::kInterface) {
                ++static_cast<ServedService*>(userdata)->m_getAllCalls;
            }
            sd_bus_message_rewind(m, 1); // the service reads it again
        }
        return 0;
    }

    libsystemd::BusPtr m_bus;
    libsystemd::BusSlotPtr m_filter;
    std::atomic<int> m_getAllCalls{0};
    std::unique_ptr<DaemonService> m_service;
    std::mutex m_mutex;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

} // namespace nicer::dbus::test
