#pragma once

#include "libsystemd/Bus.h"
#include "usermanager/UnitManager.h"

#include <systemd/sd-event.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace nicer::usermanager {

/**
 * UnitManager over a real systemd user manager (org.freedesktop.systemd1 on the user bus).
 *
 * Holds its own bus connection. Its calls that return an answer block on it, and need no event loop, so
 * they can be made from inside another connection's callbacks (nicerd's D-Bus methods). Once attach()ed to
 * the event loop, setUnitPropertiesAsync() does not wait: the loop takes systemd's answer, so the quota
 * written every period never stalls nicerd's loop behind a slow manager (unattached, it writes at once).
 * Not thread-safe (sd-bus is not).
 *
 * Waiting for a job waits for its JobRemoved signal (the manager is subscribed to once per connection),
 * matched before the call that makes the job, as systemctl does, so a job that ends before its path is
 * known is not missed; at most 30 s. The wait blocks: only starts and stops that need the unit up or gone
 * before going on wait (nicerd's start-up, a workload switch, adopting processes, the end).
 * A waited-for start fails when the unit then is "failed" or "inactive": with CollectMode=inactive-or-failed
 * systemd forgets a failed unit before we can look, so a start that ends inactive (a service that failed or
 * exited at once, e.g. a missing binary) is an error too. Do not wait for oneshot services.
 * Stopping or resetting a unit systemd does not know succeeds: the caller's goal is already met. Reads of
 * such a unit give the "nothing there" values: "inactive", an empty cgroup, kNoUsage, PID 0.
 *
 * A connection from connectUser() is opened again when the bus has closed it (the session bus restarted):
 * the call that finds it closed tries once, and fails with the reason if the bus is not back yet; writes
 * still on their way on the old one count as failed. Blocking calls time out after 5 s rather than sd-bus's
 * 25 s, so a manager that does not answer stalls nicerd's loop for a few periods at most.
 */
class SystemdUnitManager final : public UnitManager {
public:
    /// Connects to the user bus (sd_bus_open_user: $DBUS_SESSION_BUS_ADDRESS or $XDG_RUNTIME_DIR/bus).
    static Result<std::unique_ptr<SystemdUnitManager>> connectUser();
    /// Uses an already open connection, e.g. one to another manager in tests.
    explicit SystemdUnitManager(libsystemd::BusPtr bus);
    ~SystemdUnitManager() override;
    SystemdUnitManager(const SystemdUnitManager&) = delete;
    SystemdUnitManager& operator=(const SystemdUnitManager&) = delete;

    /// Lets @p event, which must outlive this, process the connection (and the next one, after the bus
    /// restarted): from then on, setUnitPropertiesAsync() returns before systemd answers.
    Result<void> attach(sd_event* event);

    Result<void> startTransientUnit(const std::string& name, const Properties& props, bool wait) override;
    Result<void> startUnit(const std::string& name, bool wait) override;
    Result<void> setUnitProperties(const std::string& name, const Properties& props) override;
    void setUnitPropertiesAsync(const std::string& name, const Properties& props) override;
    PropertyWrites takePropertyWrites(const std::string& name, const std::string& property) override;
    Result<void> stopUnit(const std::string& name, bool wait) override;
    Result<void> freezeUnit(const std::string& name) override;
    Result<void> thawUnit(const std::string& name) override;
    Result<void> killUnit(const std::string& name, int signal) override;
    Result<void> resetFailedUnit(const std::string& name) override;

    Result<UnitState> activeState(const std::string& name) override;
    Result<std::string> controlGroup(const std::string& name) override;
    Result<std::string> unitFile(const std::string& name) override;
    Result<std::uint64_t> cpuUsageNSec(const std::string& name) override;
    Result<std::uint32_t> mainPid(const std::string& name) override;
    Result<std::string> managerVersion() override;
    Result<std::string> managerControlGroup() override;

private:
    /// The unit's object path from GetUnit; empty when systemd has not loaded the unit.
    Result<std::string> unitPath(const std::string& name);
    /// For reading a per-type property (ControlGroup, CPUUsageNSec, MainPID): the unit's object path (empty
    /// when systemd does not know the unit) and its type's interface, e.g. org.freedesktop.systemd1.Slice.
    struct TypedUnit {
        std::string path;
        std::string interface;
    };
    Result<TypedUnit> typedUnit(const std::string& name, std::string_view what);
    /// With @p wait, subscribes to the manager's signals (once per connection) and matches JobRemoved, into
    /// m_removedJobs while the returned slot lives: taken before the call that makes the job. Without, an
    /// empty slot.
    Result<libsystemd::BusSlotPtr> watchJobs(bool wait, std::string_view what);
    /// Waits until the job @p jobPath has ended, at most 30 s; its result ("done", "failed", "canceled",
    /// "timeout", "dependency", "skipped"). Needs watchJobs()'s slot from before the call.
    Result<std::string> waitForJob(const std::string& jobPath, std::string_view what);
    static int onJobRemoved(sd_bus_message* signal, void* userdata, sd_bus_error* error) noexcept;
    /// Reads the job from a start call's @p reply; with @p wait, waits for it and checks the unit came up.
    Result<void> awaitStart(sd_bus_message* reply, const std::string& name, const std::string& what,
                            bool wait);
    /// A call on the Manager object that takes only the unit name.
    Result<void> callWithName(const char* method, const std::string& name, bool unknownIsDone);
    /// SetUnitProperties(name, true, props), not yet sent.
    Result<libsystemd::BusMessagePtr> propertiesCall(const std::string& name, const Properties& props,
                                                     std::string_view what);
    /// Opens the user bus again if it was closed (connectUser() connections only); then, unless the loop
    /// does it, dispatches anything the bus queued between our calls, so nothing piles up unread.
    void drain();

    /// The asynchronous writes to one unit.
    struct UnitWrites {
        SystemdUnitManager* owner = nullptr;
        std::string unit;
        libsystemd::BusSlotPtr inFlight;     ///< the write on its way, until answered
        std::vector<std::string> inFlightOf; ///< the properties it carries
        Properties queued;                   ///< what goes next once it is answered, newest values only
        /// By property: the latest answered write's failure, until taken.
        std::map<std::string, Result<void>> failures;
        /// @p failure for each of @p names.
        void fail(const std::vector<std::string>& names, const Result<void>& failure);
    };
    /// Sends @p writes' queued properties.
    void sendQueued(UnitWrites& writes);
    static int onWriteAnswered(sd_bus_message* reply, void* userdata, sd_bus_error* error) noexcept;

    libsystemd::BusPtr m_bus;
    bool m_reopens = false;
    sd_event* m_event = nullptr; ///< the loop that processes m_bus, once attached
    bool m_subscribed = false;   ///< to the manager's signals, on m_bus
    /// The jobs that ended while watchJobs()'s slot lived: their result by job path.
    std::map<std::string, std::string> m_removedJobs;
    /// By unit. After m_bus: the slots go first. Entries stay (their address is the callbacks' userdata).
    std::map<std::string, UnitWrites> m_writes;
};

} // namespace nicer::usermanager
