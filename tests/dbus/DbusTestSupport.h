#pragma once
// For the D-Bus units' tests: a private session bus (a real dbus-daemon, nobody else on it), a fake nicerd
// behind daemon::DaemonControl, and DaemonService published on its own connection, served by a thread.

#include "PrivateBusConfig.h"
#include "api/BusNames.h"
#include "daemon/DaemonControl.h"
#include "dbus/service/DaemonService.h"
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
        const char* old = std::getenv("DBUS_SESSION_BUS_ADDRESS");
        m_oldAddress = old ? std::optional<std::string>(old) : std::nullopt;
        ::setenv("DBUS_SESSION_BUS_ADDRESS", m_address.c_str(), 1);
    }
    ~PrivateBus() {
        if (m_oldAddress) {
            ::setenv("DBUS_SESSION_BUS_ADDRESS", m_oldAddress->c_str(), 1);
        } else {
            ::unsetenv("DBUS_SESSION_BUS_ADDRESS");
        }
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
    std::optional<std::string> m_oldAddress;
};

/// nicerd as the service sees it, with values a test sets and records of what the service asked.
class FakeDaemon final : public daemon::DaemonControl {
public:
    FakeDaemon() {
        m_workload.argv = {"md5sum", "/dev/zero"};
        m_workload.instances = 3;
        m_workload.demo = true;
        m_workload.preset = "demo";
        m_presets = {{"demo", "Demo", "Burns CPU", true}, {"boinc", "BOINC", "Science", false}};
        m_state.multiplier = 2.5;
        m_state.overloadCount = 1;
        m_state.quota = 0.4;
        m_last = api::Sample{1'700'000'000'000'000, 0.3, 0.2, 0.5, 0.15, 0.4, 2.5, 1, false, true};
        m_history = {api::Sample{1, 0.9, 0.1, 0.0, -1.0, 0.0, 1.0, 0, false, false},
                     api::Sample{2, 0.1, 0.6, 0.3, 0.25, 0.3, 4.0, 2, true, true}};
    }

    // What the service asked of it; read under the lock (the service runs in its own thread).
    mutable std::mutex mutex;
    control::ControllerParams params_;
    bool paused_ = false;
    std::string lastPreset;
    std::string refusal; ///< when set, pause() and setWorkloadPreset() fail with it
    std::vector<api::DownloadEntry> downloads_;
    api::BandwidthMode bandwidth_;
    api::BoincStatus boinc_;
    std::vector<std::string> boincRequests; ///< "attach URL KEY", "manager URL NAME PASSWORD", "detach URL"
    std::string boincRefusal;               ///< when set, the BOINC requests fail with it
    std::string actuatorNote_ = "no cpu controller: a duty cycle holds the work";
    nicer::api::Placement placement_ = nicer::api::Placement::RootSlice;
    std::string placementNote_ = "in nicer.slice (nicer-work@alice.service), directly under the root cgroup";
    double memoryMaxPercent_ = 50;
    std::uint64_t memoryMaxBytes_ = 4'294'967'296; // 4 GiB, 50% of 8 GiB

    const control::ControllerParams& params() const override { return params_; }
    Result<void> setParams(const control::ControllerParams& p) override {
        std::lock_guard lock(mutex);
        params_ = p;
        return {};
    }
    Result<void> pause() override {
        std::lock_guard lock(mutex);
        if (!refusal.empty()) {
            return Error{refusal};
        }
        paused_ = true;
        return {};
    }
    Result<void> resume() override {
        std::lock_guard lock(mutex);
        paused_ = false;
        return {};
    }
    bool paused() const override { return paused_; }
    nicer::control::Signal signalSetting() const override { return nicer::control::Signal::Auto; }
    std::string actuatorName() const override { return "signal-duty-cycle"; }
    std::string actuatorNote() const override { return actuatorNote_; }
    nicer::api::Placement placement() const override { return placement_; }
    std::string placementNote() const override { return placementNote_; }
    double memoryMaxPercent() const override { return memoryMaxPercent_; }
    std::uint64_t memoryMaxBytes() const override { return memoryMaxBytes_; }
    const workload::WorkloadSpec& workload() const override { return m_workload; }
    std::vector<workload::PresetInfo> presets() const override { return m_presets; }
    Result<void> setWorkloadPreset(const std::string& id) override {
        std::lock_guard lock(mutex);
        lastPreset = id;
        if (!refusal.empty()) {
            return Error{refusal};
        }
        return {};
    }
    int cpuCount() const override { return 4; }
    const control::ControllerState& controllerState() const override { return m_state; }
    const std::optional<api::Sample>& lastSample() const override { return m_last; }
    const std::deque<api::Sample>& history() const override { return m_history; }
    const std::string& lastError() const override { return m_lastError; }
    std::vector<api::DownloadEntry> downloads() const override {
        std::lock_guard lock(mutex);
        return downloads_;
    }
    double downloadRate() const override { return 1234.5; }
    api::BandwidthMode bandwidthMode() const override { return bandwidth_; }
    api::BoincStatus boincStatus() const override {
        std::lock_guard lock(mutex);
        return boinc_;
    }
    void boincAttach(const std::string& url, const std::string& key, BoincDone done) override {
        answerBoinc("attach " + url + " " + key, std::move(done));
    }
    void boincAttachAccountManager(const std::string& url, const std::string& name,
                                   const std::string& password, BoincDone done) override {
        answerBoinc("manager " + url + " " + name + " " + password, std::move(done));
    }
    void boincDetach(const std::string& url, BoincDone done) override {
        answerBoinc("detach " + url, std::move(done));
    }

private:
    void answerBoinc(std::string request, BoincDone done) {
        std::string refused;
        {
            std::lock_guard lock(mutex);
            boincRequests.push_back(std::move(request));
            refused = boincRefusal;
        }
        done(refused.empty() ? Result<void>{} : Result<void>{Error{refused}});
    }

    workload::WorkloadSpec m_workload;
    std::vector<workload::PresetInfo> m_presets;
    control::ControllerState m_state;
    std::optional<api::Sample> m_last;
    std::deque<api::Sample> m_history;
    std::string m_lastError = "the last error";
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
