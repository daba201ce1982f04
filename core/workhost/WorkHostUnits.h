#pragma once

#include "usermanager/UnitManager.h"
#include "util/Result.h"
#include "util/UniqueFd.h"
#include "workhost/WorkHostMessage.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace nicer::workhost {

/// What the root idle slice is made of: the .deb's system units (resources/system/).
inline constexpr const char* kIdleSlice = "nicer.slice";

/**
 * The work's place in the root idle slice, seen by nicerd as a unit manager, so that the workload supervisor
 * and the slice actuator run there as they run in the user manager's nicer.slice:
 * - "the slice" (the name given as @p slice) is the work's leaf in nicer-work@UID.service, a system unit
 *   that systemd starts when this user's nicerd connects to nicer-work@UID.socket (the user's own, which
 *   comes with the user's manager); its properties are written straight to the leaf's files (cpu.max,
 *   cpu.idle, memory.high, memory.max), which this user owns;
 * - "transient services" named with @p instancePrefix are the work's instances, which the unit's process
 *   (nicer-work-host, WorkHost) starts in leaves of their own when asked over the link;
 * - every other unit, and the manager's own properties, are the user manager's (@p user, which must outlive
 *   this).
 * Freezing goes through the leaf's cgroup.freeze (no unit to freeze), which the slice actuator falls back to.
 *
 * The link to the host is that socket's connection: nicerd's end closes when it dies, even by kill -9, and
 * the host then stops the work. When the host ends (crashed, or stopped with the user's manager) every
 * instance reads as failed, and the next start of one connects again, which starts the unit again (a host
 * still stopping finishes first: the connection waits in the socket's queue).
 */
class WorkHostUnits final : public usermanager::UnitManager {
public:
    struct Names {
        std::string slice;          ///< the name the actuator and the supervisor use for the work's slice
        std::string instancePrefix; ///< the supervisor's unit prefix: "PREFIX-N.service" are instances
    };

    /// Connects to this user's work host at @p socket (workHostSocket(getuid()) but in tests) and waits up
    /// to @p wait for its greeting; the leaf it names is under @p cgroupRoot. Fails, saying why and what to
    /// do, where the system part is not installed or not set up for this user, or the host cannot run the
    /// work there.
    static Result<std::unique_ptr<WorkHostUnits>>
    connect(usermanager::UnitManager& user, Names names, std::chrono::milliseconds wait,
            std::filesystem::path socket, std::filesystem::path cgroupRoot = "/sys/fs/cgroup");
    ~WorkHostUnits() override;

    /// nicer-work@UID.service.
    const std::string& systemUnit() const { return m_unit; }
    /// The work's leaf, from the cgroup root, e.g. "/nicer.slice/nicer-work@1000.service/work".
    const std::string& workCgroup() const { return m_workCgroup; }

    Result<void> startTransientUnit(const std::string& name, const usermanager::Properties& props,
                                    bool wait) override;
    Result<void> startUnit(const std::string& name, bool wait) override;
    Result<void> setUnitProperties(const std::string& name, const usermanager::Properties& props) override;
    /// The slice's are written to its leaf's files at once (no bus to wait on); the others go to the user
    /// manager.
    void setUnitPropertiesAsync(const std::string& name, const usermanager::Properties& props) override;
    usermanager::PropertyWrites takePropertyWrites(const std::string& name,
                                                   const std::string& property) override;
    Result<void> stopUnit(const std::string& name, bool wait) override;
    Result<void> freezeUnit(const std::string& name) override;
    Result<void> thawUnit(const std::string& name) override;
    Result<void> killUnit(const std::string& name, int signal) override;
    Result<void> resetFailedUnit(const std::string& name) override;
    Result<usermanager::UnitState> activeState(const std::string& name) override;
    Result<std::string> controlGroup(const std::string& name) override;
    Result<std::string> unitFile(const std::string& name) override;
    Result<std::uint64_t> cpuUsageNSec(const std::string& name) override;
    Result<std::uint32_t> mainPid(const std::string& name) override;
    Result<std::string> managerControlGroup() override { return m_user.managerControlGroup(); }
    Result<std::string> managerVersion() override { return m_user.managerVersion(); }

private:
    struct Instance {
        usermanager::UnitState state = usermanager::UnitState::Inactive;
        std::uint32_t pid = 0;
    };

    WorkHostUnits(usermanager::UnitManager& user, Names names, std::chrono::milliseconds wait,
                  std::filesystem::path socket, std::filesystem::path cgroupRoot);
    bool isSlice(const std::string& name) const { return name == m_names.slice; }
    bool isInstance(const std::string& name) const;
    /// Connects (again), which starts the system unit, and waits for its host's hello; then the leaf's
    /// properties set so far are written again. Any failure leaves no link: a host whose leaf could not take
    /// the cap runs nothing.
    Result<void> ensureHost();
    /// Handles what the host said since; waits up to @p wait for one message when given.
    Result<void> receive(std::optional<std::chrono::milliseconds> wait = std::nullopt);
    void handle(const Message& message);
    void hostGone();
    Result<void> writeLeafFile(const std::string& file, const std::string& value);
    /// An instance's own leaf's cgroup.freeze (limitRunning's hold: the supervisor's freezeUnit()).
    Result<void> writeInstanceFreeze(const std::string& name, const char* value);
    Result<void> applyProperty(const usermanager::Property& property);

    usermanager::UnitManager& m_user;
    Names m_names;
    std::string m_unit;
    std::chrono::milliseconds m_wait;
    std::filesystem::path m_socket;
    std::filesystem::path m_cgroupRoot;
    UniqueFd m_link;
    std::string m_workCgroup;
    std::map<std::string, Instance> m_instances;
    std::map<std::string, Message> m_answers; ///< the host's answer to a start (started, failed), until taken
    std::uint64_t m_quotaPerSecUSec = UINT64_MAX;
    std::uint64_t m_quotaPeriodUSec = 100'000;
    std::map<std::string, std::string> m_leafFiles; ///< what was written to the leaf, to write again
    /// By property: the failure of setUnitPropertiesAsync() on the slice, until taken.
    std::map<std::string, Result<void>> m_sliceWrites;
};

} // namespace nicer::workhost
