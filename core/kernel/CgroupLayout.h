#pragma once

#include "util/Result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace nicer::kernel {

/// The value of @p key in a flat keyed file such as cpu.stat or memory.events ("key value" lines).
Result<std::uint64_t> readStatField(const std::filesystem::path& file, std::string_view key);

/**
 * Where this machine mounts its cgroup hierarchies, and the kernel files of a given cgroup in them.
 *
 * Works on pure cgroup v2, on hybrid (v1 controllers + a v2 "unified" tree, as on the CI machines) and on
 * pure v1. A cgroup is named as systemd's ControlGroup property names it ("/a/b/c"). Pure: parse() takes the
 * text of /proc/self/mountinfo, so tests feed fixtures; the file accessors then read real files.
 */
class CgroupLayout {
public:
    /// Parses mountinfo text; the error says what is missing.
    static Result<CgroupLayout> parse(std::string_view mountinfo);
    /// Reads and parses /proc/self/mountinfo (or @p path).
    static Result<CgroupLayout> detect(const std::string& path = "/proc/self/mountinfo");

    /// The v2 tree: the cgroup2 mount (pure v2) or the "unified" one (hybrid); empty on pure v1.
    const std::optional<std::filesystem::path>& unifiedRoot() const { return m_unified; }
    /// v1 mounts of the controllers, where present.
    const std::optional<std::filesystem::path>& cpuRoot() const { return m_cpu; }
    const std::optional<std::filesystem::path>& cpuacctRoot() const { return m_cpuacct; }
    const std::optional<std::filesystem::path>& freezerRoot() const { return m_freezer; }
    /// True when the cpu controller is on the v2 tree (pure v2), false when it is a v1 hierarchy.
    bool cpuOnUnified() const { return m_cpuOnUnified; }

    /// The file that holds the CPU limit of @p cgroup: cpu.max (v2) or cpu.cfs_quota_us (v1); nullopt if
    /// that file does not exist (no cpu controller for this cgroup).
    std::optional<std::filesystem::path> cpuQuotaFile(std::string_view cgroup) const;
    /// Reads the CPU limit of @p cgroup in microseconds of CPU per second (UINT64_MAX = none).
    Result<std::uint64_t> readCpuQuotaPerSecUSec(std::string_view cgroup) const;
    /// CPU time used by @p cgroup and its children, in ns: cpu.stat usage_usec on the v2 tree, else
    /// cpuacct.usage.
    Result<std::uint64_t> readCpuUsageNSec(std::string_view cgroup) const;
    /// Whether the kernel runs @p cgroup at idle priority among its siblings: its cpu.idle is 1 (the v2 tree,
    /// or the v1 cpu hierarchy on kernels from 5.15). False where the file says 0 or does not exist (systemd
    /// before 252, older kernels, v1 where systemd gives CPUWeight=idle the smallest cpu.shares instead).
    Result<bool> readCpuIdle(std::string_view cgroup) const;
    /// How many CPU bandwidth windows the kernel has started for @p cgroup (cpu.stat nr_periods, v2 or v1):
    /// it counts while a quota is set and the cgroup's processes run.
    Result<std::uint64_t> readBandwidthWindows(std::string_view cgroup) const;
    /// cgroup.freeze of @p cgroup on the v2 tree (works on hybrid too), or nullopt where there is none.
    std::optional<std::filesystem::path> freezeFile(std::string_view cgroup) const;
    /// Writes 1/0 to cgroup.freeze.
    Result<void> setFrozen(std::string_view cgroup, bool frozen) const;
    /// The controllers @p cgroup may use, from its cgroup.controllers on the v2 tree (those its parent
    /// enabled for it; on hybrid, those not taken by a v1 hierarchy).
    Result<std::vector<std::string>> readControllers(std::string_view cgroup) const;
    /// Whether the kernel can limit the memory of @p cgroup, a child of its manager's own cgroup: on the v2
    /// tree, its parent's cgroup.controllers lists memory (what systemd delegated to the user manager); with
    /// a v1 memory hierarchy, the parent is there and this user may create cgroups in it. Unlike the child's
    /// own files, this holds before the manager has realized the child's limits.
    bool memoryControllerAvailable(std::string_view cgroup) const;
    /// PIDs of every process in @p cgroup and all its descendants (from the v2 tree, else the name=systemd
    /// v1 tree).
    Result<std::vector<pid_t>> readPids(std::string_view cgroup) const;
    /// Sends @p signal to every process readPids() lists (no systemd involved); returns how many there were.
    Result<int> signalAll(std::string_view cgroup, int signal) const;

    /// The cgroup of the user manager (".../user@UID.service") that @p cgroup is under; empty when it is
    /// under none (a system service, or a private manager in a scope).
    static std::string userManagerCgroup(std::string_view cgroup);

private:
    /// @p cgroup's file in the hierarchy of the cpu controller (the v2 tree's @p v2Name where the controller
    /// is there, else the v1 cpu hierarchy's @p v1Name), whether or not it exists; nullopt without one.
    std::optional<std::filesystem::path> cpuControllerFile(std::string_view cgroup, std::string_view v2Name,
                                                           std::string_view v1Name) const;

    std::optional<std::filesystem::path> m_unified;
    std::optional<std::filesystem::path> m_cpu;
    std::optional<std::filesystem::path> m_cpuacct;
    std::optional<std::filesystem::path> m_freezer;
    std::optional<std::filesystem::path> m_memory;  // v1
    std::optional<std::filesystem::path> m_systemd; // v1 name=systemd
    bool m_cpuOnUnified = false;
};

} // namespace nicer::kernel
