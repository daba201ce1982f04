#pragma once

#include "libsystemd/Bus.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nicer::test {

/**
 * A stand-in for systemd's user manager on a (private) bus, served by a thread of its own: the Manager's
 * GetUnit, StartTransientUnit, StopUnit, SetUnitProperties and Subscribe, JobRemoved, and the units'
 * ActiveState and ControlGroup (a slice's cgroup is "/" + its name). Like a slow manager, it can sit on
 * SetUnitProperties before answering, and take its time over jobs, without holding up its other answers.
 */
class FakeSystemd {
public:
    /// Serves org.freedesktop.systemd1 on @p bus, a connection of its own.
    explicit FakeSystemd(libsystemd::BusPtr bus);
    ~FakeSystemd();
    FakeSystemd(const FakeSystemd&) = delete;
    FakeSystemd& operator=(const FakeSystemd&) = delete;

    /// How long SetUnitProperties waits before it answers (and the value is in force); 0 at first.
    void setWriteDelay(std::chrono::milliseconds delay);
    /// SetUnitProperties calls that set @p property are refused (InvalidArgs); "" at first: none.
    void setRefused(std::string property);
    /// How long a job takes before its JobRemoved; 0 at first.
    void setJobDelay(std::chrono::milliseconds delay);
    /// The result the next jobs end with; "done" at first. A start job that does not end "done" leaves the
    /// unit "failed".
    void setJobResult(std::string result);
    /// A job of no delay ends, and its JobRemoved is sent, before the call that made it is answered.
    void setJobEndsBeforeReply(bool before);

    /// The CPUQuotaPerSecUSec of every SetUnitProperties received that set one, in order.
    std::vector<std::uint64_t> quotasReceived() const;
    /// The CPUQuotaPerSecUSec that systemd answered last: the one in force; 0 before any.
    std::uint64_t quotaInForce() const;
    /// How often Subscribe was called.
    int subscriptions() const;
    /// The unit's ActiveState, "inactive" when it is not loaded.
    std::string activeState(const std::string& unit) const;

private:
    struct Delayed {
        std::chrono::steady_clock::time_point due;
        std::function<void()> action;
    };

    static int getUnit(sd_bus_message* call, void* userdata, sd_bus_error* error);
    static int startTransientUnit(sd_bus_message* call, void* userdata, sd_bus_error* error);
    static int stopUnit(sd_bus_message* call, void* userdata, sd_bus_error* error);
    static int setUnitProperties(sd_bus_message* call, void* userdata, sd_bus_error* error);
    static int subscribe(sd_bus_message* call, void* userdata, sd_bus_error* error);
    static int unitProperty(sd_bus* bus, const char* path, const char* interface, const char* property,
                            sd_bus_message* reply, void* userdata, sd_bus_error* error);

    /// Makes a job for @p unit that ends, after the job delay, in @p end(result) and its JobRemoved;
    /// answers @p call with the job's path.
    int runJob(sd_bus_message* call, const std::string& unit, std::function<void(const std::string&)> end);
    /// Runs @p action after @p delay, on the fake's thread (at once when there is no delay).
    void later(std::chrono::milliseconds delay, std::function<void()> action);
    void serve();

    libsystemd::BusPtr m_bus;
    libsystemd::BusSlotPtr m_manager;
    libsystemd::BusSlotPtr m_units;
    libsystemd::BusSlotPtr m_slices;
    std::vector<Delayed> m_delayed; ///< the fake's thread's only
    std::uint32_t m_lastJob = 0;    ///< the fake's thread's only

    mutable std::mutex m_mutex; ///< for what follows: the test's thread reads and sets them
    std::chrono::milliseconds m_writeDelay{0};
    std::chrono::milliseconds m_jobDelay{0};
    std::string m_jobResult = "done";
    bool m_jobEndsBeforeReply = false;
    std::string m_refused;
    std::vector<std::uint64_t> m_quotas;
    std::uint64_t m_quotaInForce = 0;
    int m_subscriptions = 0;
    std::map<std::string, std::string> m_activeStates; ///< of the loaded units

    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

} // namespace nicer::test
