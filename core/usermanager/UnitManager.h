#pragma once

#include "util/Keywords.h"
#include "util/Result.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nicer::usermanager {

/// A unit's ActiveState. systemd's names for it (kUnitStateKeywords) are read only where its reply is
/// parsed (SystemdUnitManager); the rest of nicer compares the enum.
enum class UnitState {
    Active,
    Reloading,
    Inactive,
    Failed,
    Activating,
    Deactivating,
    Maintenance,
    Refreshing
};

/// systemd's ActiveState names (src/basic/unit-def.c), in UnitState's order.
inline constexpr std::array<std::string_view, 8> kUnitStateKeywords = {
    "active", "reloading", "inactive", "failed", "activating", "deactivating", "maintenance", "refreshing"};

/// "active", "inactive", ...: the state as systemd names it, for messages.
constexpr std::string_view unitStateName(UnitState state) {
    return keywordIn(kUnitStateKeywords, state);
}

/// The state systemd names @p name; nullopt for one this nicer does not know (a newer systemd's).
constexpr std::optional<UnitState> unitStateFromName(std::string_view name) {
    return valueIn<UnitState>(kUnitStateKeywords, name);
}

/// One ExecStart= entry: a(sasb) in systemd's D-Bus API.
struct ExecCommand {
    std::string path;
    std::vector<std::string> argv; ///< argv[0] included
    bool ignoreFailure = false;
};

/// The D-Bus types systemd's unit properties use here: b, i, u, t, s, as, au, a(sasb).
using PropertyValue =
    std::variant<bool, std::int32_t, std::uint32_t, std::uint64_t, std::string, std::vector<std::string>,
                 std::vector<std::uint32_t>, std::vector<ExecCommand>>;

/// A unit property by its D-Bus name, e.g. {"CPUQuotaPerSecUSec", uint64_t{500000}}.
struct Property {
    std::string name;
    PropertyValue value;
};
using Properties = std::vector<Property>;

/// CPUUsageNSec's value when systemd has no accounting data for the unit.
inline constexpr std::uint64_t kNoUsage = UINT64_MAX;

/// How the asynchronous writes of one property of one unit stand (UnitManager::takePropertyWrites).
struct PropertyWrites {
    /// The latest answered write's failure, when it failed: systemd refused it, or did not answer in time.
    Result<void> failure;
    /// A write is still waiting for systemd's answer (or queued behind one that is).
    bool pending = false;
};

/**
 * The thin layer over org.freedesktop.systemd1.Manager that the actuators and the workload supervisor use.
 * SystemdUnitManager talks to the real user manager over sd-bus; unit tests substitute a fake.
 * Every error says which call failed on which unit and systemd's own message.
 */
class UnitManager {
public:
    virtual ~UnitManager() = default;

    /// StartTransientUnit(name, "fail", props, []); with @p wait, returns once the start job has finished.
    virtual Result<void> startTransientUnit(const std::string& name, const Properties& props, bool wait) = 0;
    /// StartUnit(name, "replace"), for a unit systemd loads from a file; @p wait as for startTransientUnit.
    virtual Result<void> startUnit(const std::string& name, bool wait) = 0;
    /// SetUnitProperties(name, runtime = true, props).
    virtual Result<void> setUnitProperties(const std::string& name, const Properties& props) = 0;
    /// SetUnitProperties without waiting for the answer, for a value written again and again (the quota of
    /// every period, the memory rule's MemoryHigh): at most one such write per unit is on its way, and a
    /// newer one replaces the values a queued one would write, so a slow manager is never sent stale values.
    /// Its outcome is taken with takePropertyWrites(), property by property. A synchronous
    /// setUnitProperties() made later wins over a queued write.
    virtual void setUnitPropertiesAsync(const std::string& name, const Properties& props) = 0;
    /// How the asynchronous writes of @p property to @p name stand: the failure of the latest one answered
    /// since the last call (reported once), and whether one is still on its way. Each property's writer
    /// takes its own (the quota's failure holds the work by SIGSTOP; MemoryHigh's is only said).
    virtual PropertyWrites takePropertyWrites(const std::string& name, const std::string& property) = 0;
    /// StopUnit(name, "replace"); with @p wait, returns once the stop job has finished.
    virtual Result<void> stopUnit(const std::string& name, bool wait) = 0;
    virtual Result<void> freezeUnit(const std::string& name) = 0;
    virtual Result<void> thawUnit(const std::string& name) = 0;
    /// KillUnit(name, "all", signal).
    virtual Result<void> killUnit(const std::string& name, int signal) = 0;
    virtual Result<void> resetFailedUnit(const std::string& name) = 0;

    /// Its ActiveState; Inactive for a unit systemd does not know (it was never started or was
    /// garbage-collected).
    virtual Result<UnitState> activeState(const std::string& name) = 0;
    /// The unit's ControlGroup, e.g. "/user.slice/.../nicer.slice"; empty while it has none.
    virtual Result<std::string> controlGroup(const std::string& name) = 0;
    /// The file systemd loads the unit from (its FragmentPath), empty for a transient or unknown unit.
    virtual Result<std::string> unitFile(const std::string& name) = 0;
    /// CPUUsageNSec, or kNoUsage where systemd does not account it (as on cgroup v1 hybrid setups).
    virtual Result<std::uint64_t> cpuUsageNSec(const std::string& name) = 0;
    /// Main PID of a service, 0 when it has none.
    virtual Result<std::uint32_t> mainPid(const std::string& name) = 0;
    /// The manager's own cgroup (its ControlGroup property), e.g.
    /// "/user.slice/user-1000.slice/user@1000.service": everything it runs is below it. Empty when the
    /// manager does not say.
    virtual Result<std::string> managerControlGroup() = 0;
    /// The manager's Version property, e.g. "249.11-0ubuntu3.12" or "252 (252.22-1~deb12u1)".
    virtual Result<std::string> managerVersion() = 0;
};

} // namespace nicer::usermanager
