#pragma once

#include "libsystemd/Bus.h"
#include "usermanager/UnitManager.h"

#include <memory>
#include <string>
#include <string_view>

namespace nicer::usermanager {

/**
 * UnitManager over a real systemd user manager (org.freedesktop.systemd1 on the user bus).
 *
 * Holds its own bus connection and only makes blocking calls on it; it is never attached to an event loop,
 * so it can be used from inside another connection's callbacks. Not thread-safe (sd-bus is not).
 * Waiting for a job polls the job object until systemd drops it (JobRemoved is only sent to subscribers).
 * A waited-for start fails when the unit then is "failed" or "inactive": with CollectMode=inactive-or-failed
 * systemd forgets a failed unit before we can look, so a start that ends inactive (a service that failed or
 * exited at once, e.g. a missing binary) is an error too. Do not wait for oneshot services.
 * Stopping or resetting a unit systemd does not know succeeds: the caller's goal is already met. Reads of
 * such a unit give the "nothing there" values: "inactive", an empty cgroup, kNoUsage, PID 0.
 *
 * A connection from connectUser() is opened again when the bus has closed it (the session bus restarted):
 * the call that finds it closed tries once, and fails with the reason if the bus is not back yet. Calls
 * time out after 5 s rather than sd-bus's 25 s, so a manager that does not answer stalls nicerd's loop
 * for a few periods at most.
 */
class SystemdUnitManager final : public UnitManager {
public:
    /// Connects to the user bus (sd_bus_open_user: $DBUS_SESSION_BUS_ADDRESS or $XDG_RUNTIME_DIR/bus).
    static Result<std::unique_ptr<SystemdUnitManager>> connectUser();
    /// Uses an already open connection, e.g. one to another manager in tests.
    explicit SystemdUnitManager(libsystemd::BusPtr bus);

    Result<void> startTransientUnit(const std::string& name, const Properties& props, bool wait) override;
    Result<void> startUnit(const std::string& name, bool wait) override;
    Result<void> setUnitProperties(const std::string& name, const Properties& props) override;
    Result<void> stopUnit(const std::string& name, bool wait) override;
    Result<void> freezeUnit(const std::string& name) override;
    Result<void> thawUnit(const std::string& name) override;
    Result<void> killUnit(const std::string& name, int signal) override;
    Result<void> resetFailedUnit(const std::string& name) override;

    Result<std::string> activeState(const std::string& name) override;
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
    /// Polls @p jobPath until systemd drops the job (it finished), at most 30 s.
    Result<void> waitForJob(const std::string& jobPath, std::string_view what);
    /// Reads the job from a start call's @p reply; with @p wait, waits for it and checks the unit came up.
    Result<void> awaitStart(sd_bus_message* reply, const std::string& name, const std::string& what,
                            bool wait);
    /// A call on the Manager object that takes only the unit name.
    Result<void> callWithName(const char* method, const std::string& name, bool unknownIsDone);
    /// Opens the user bus again if it was closed (connectUser() connections only); then dispatches anything
    /// the bus queued between our calls, so nothing piles up unread.
    void drain();

    libsystemd::BusPtr m_bus;
    bool m_reopens = false;
};

} // namespace nicer::usermanager
