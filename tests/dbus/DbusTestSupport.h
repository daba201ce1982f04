#pragma once
// For the D-Bus units' tests: a private session bus (a real dbus-daemon, nobody else on it), a fake nicerd
// behind daemon::DaemonControl, and DaemonService published on its own connection, served by a thread.

#include "PrivateBusConfig.h"
#include "ScopedEnv.h"
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

/// `dbus-daemon --print-address --nofork` for one test, with a session bus's configuration but no service
/// files (so no call can start an installed nicerd on it); DBUS_SESSION_BUS_ADDRESS points at it while it
/// lives, so that DaemonClient::connect() (sd_bus_open_user) finds it.
class PrivateBus {
public:
    PrivateBus() {
        char dir[] = "/tmp/nicer-dbus-test-XXXXXX";
        REQUIRE(::mkdtemp(dir) != nullptr);
        m_dir = dir;
        const std::string config = m_dir + "/bus.conf";
        {
            std::ofstream out(config);
            out << nicer::test::privateBusConfig(m_dir);
            REQUIRE(out.good());
        }
        const std::string configOption = "--config-file=" + config;
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        m_pid = ::fork();
        REQUIRE(m_pid >= 0);
        if (m_pid == 0) {
            ::dup2(fds[1], STDOUT_FILENO);
            ::close(fds[0]);
            ::close(fds[1]);
            ::execlp("dbus-daemon", "dbus-daemon", configOption.c_str(), "--print-address", "--nofork",
                     nullptr);
            ::_exit(127);
        }
        ::close(fds[1]);
        std::string line;
        char c = 0;
        // The address comes as one line once the bus listens; a dbus-daemon that is missing closes the pipe.
        while (::read(fds[0], &c, 1) == 1 && c != '\n') {
            line += c;
        }
        ::close(fds[0]);
        INFO("dbus-daemon did not start: install the dbus-daemon package (packaging/dev.sh does)");
        REQUIRE_FALSE(line.empty());
        m_address = line;
        m_env.emplace("DBUS_SESSION_BUS_ADDRESS", m_address);
    }
    ~PrivateBus() {
        m_env.reset();
        ::kill(m_pid, SIGTERM);
        ::waitpid(m_pid, nullptr, 0);
        std::error_code ignored;
        std::filesystem::remove_all(m_dir, ignored);
    }
    PrivateBus(const PrivateBus&) = delete;
    PrivateBus& operator=(const PrivateBus&) = delete;

    const std::string& address() const { return m_address; }

    /// A new client connection to the bus.
    libsystemd::BusPtr connect() const { return connectTo(m_address); }

    /// A new client connection to the bus at @p address (one this class did not start, too).
    static libsystemd::BusPtr connectTo(const std::string& address) {
        sd_bus* bus = nullptr;
        REQUIRE(sd_bus_new(&bus) >= 0);
        libsystemd::BusPtr owned(bus);
        REQUIRE(sd_bus_set_address(bus, address.c_str()) >= 0);
        REQUIRE(sd_bus_set_bus_client(bus, 1) >= 0);
        REQUIRE(sd_bus_start(bus) >= 0);
        return owned;
    }

private:
    std::string m_dir;
    pid_t m_pid = -1;
    std::string m_address;
    std::optional<nicer::test::ScopedEnv> m_env; ///< DBUS_SESSION_BUS_ADDRESS, while the bus lives
};

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
    Result<void> pause() override {
        std::lock_guard lock(mutex);
        if (!refusal.empty()) {
            return Error{refusal, refusalKind};
        }
        state_.paused = true;
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
