#pragma once

#include "kernel/CgroupLayout.h"
#include "util/Result.h"
#include "util/UniqueFd.h"
#include "workhost/WorkHostMessage.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>

namespace nicer::workhost {

/**
 * The host side of the root idle slice: the process of nicer-work@UID.service, running as the user in a
 * cgroup systemd delegated to the user. It runs the work's instances in leaves of that cgroup and nothing
 * else; nicerd, in the user manager, caps them by writing the leaves' files (cpu.max, cgroup.freeze,
 * memory.high, memory.max), which the user owns.
 *
 * Why a host at all: cgroup v2 lets no process of the user manager move a process into this subtree
 * ("Delegation Containment"), so the work must be started from inside it.
 *
 * Its unit's cgroup is laid out as
 *   nicer-work@UID.service/host          this process (a cgroup with children may hold no process)
 *   nicer-work@UID.service/work          the work: nicerd's cap, freeze and memory limit
 *   nicer-work@UID.service/work/NAME     one instance and everything it starts, killed as one
 */
class WorkHost {
public:
    /// How long an instance has after SIGTERM before its leaf is killed.
    static constexpr std::chrono::seconds kStopGrace{10};
    /// How long the work has after nicerd is gone (the link closed) or the unit is stopped.
    static constexpr std::chrono::seconds kShutdownGrace{5};

    /// Lays out @p cgroup, this process's own on the v2 tree of @p layout (e.g.
    /// "/nicer.slice/nicer-work@1000.service"): moves this process into "host", enables the delegated cpu,
    /// memory and pids controllers for the children and creates "work". Fails, saying why, where cpu cannot
    /// be delegated (the cpu controller on cgroup v1). @p needsCpu false is for tests on a v2 tree without
    /// controllers (a hybrid machine's), where the host runs and stops the work but cannot cap it.
    static Result<WorkHost> prepare(kernel::CgroupLayout layout, const std::string& cgroup,
                                    bool needsCpu = true);

    /// The work's cgroup as the kernel names it, e.g. "/nicer.slice/nicer-work@1000.service/work": what the
    /// host tells nicerd in its "hello".
    const std::string& workCgroup() const { return m_workCgroup; }

    /// Blocks SIGTERM, SIGINT and SIGCHLD in this process and returns a signalfd of them, for serve():
    /// signals are read, never delivered, and the work's children get an empty mask again.
    static UniqueFd blockSignals();

    /// Serves nicerd on the connected @p link until it closes or @p signalFd (a signalfd of SIGTERM, SIGINT
    /// and SIGCHLD, which the caller blocked) says to stop; then stops every instance, within
    /// kShutdownGrace. A connection to @p listener (the socket systemd passed; -1 for none) meanwhile is
    /// answered "refused" and closed: one nicerd holds the host. Returns an error only for a link that broke
    /// in another way than closing.
    Result<void> serve(int link, int listener, int signalFd);

private:
    struct Instance {
        pid_t pid = 0;
        /// While the instance starts: the read end of the pipe its child closes on exec (or writes why not).
        /// The loop waits for it like any other descriptor, so a start that hangs (a working directory on a
        /// stalled network file system) never blocks the host.
        UniqueFd startPipe;
        std::optional<std::chrono::steady_clock::time_point> killAt; ///< set once stop was asked
    };

    WorkHost(kernel::CgroupLayout layout, std::filesystem::path unit, std::string workCgroup);
    /// Sends @p signal to every process of the cgroup directory @p dir and its children.
    void signalAll(const std::filesystem::path& dir, int signal) const;
    /// Kills every process of @p dir and its children at once (cgroup.kill, Linux 5.14), or by SIGKILL to
    /// each where cgroup.kill is missing.
    void killCgroup(const std::filesystem::path& dir) const;
    Result<void> handle(int link, const Message& message);
    /// Starts an instance; the answer ("started" or "failed") is sent when its exec is known (finishStart),
    /// or at once when it cannot even be forked.
    std::optional<Message> start(const StartRequest& request);
    /// Reads the start pipe of instance @p name: "started" on EOF (the exec happened), "failed" with why.
    void finishStart(int link, const std::string& name);
    void stop(const std::string& name, std::chrono::seconds grace);
    /// Reaps every ended child; an instance whose main process ended has its leaf killed and removed, and
    /// nicerd is told.
    void reap(int link);
    void killOverdue();
    std::optional<int> pollTimeoutMs() const;
    std::filesystem::path leafOf(const std::string& name) const { return m_work / name; }

    kernel::CgroupLayout m_layout;
    std::filesystem::path m_unit;
    std::filesystem::path m_work;
    std::string m_workCgroup;
    std::map<std::string, Instance> m_instances;
};

/// Accepts one connection on @p listener and answers it "refused" (the host serves one nicerd), then closes
/// it.
void refuseConnection(int listener);
/// Writes @p value to the cgroup file @p file (one write, as the kernel wants it); the error names both.
Result<void> writeCgroupFile(const std::filesystem::path& file, const std::string& value);
/// Waits up to @p wait until the cgroup directory @p dir holds no process (its cgroup.events says "populated
/// 0"), woken by the kernel's change of that file, not by polling it; whether it is empty.
bool waitUntilEmpty(const std::filesystem::path& dir, std::chrono::milliseconds wait);
/// Removes @p dir's child cgroups and then @p dir, once they are empty (waits up to @p wait).
void removeCgroup(const std::filesystem::path& dir, std::chrono::milliseconds wait);

} // namespace nicer::workhost
