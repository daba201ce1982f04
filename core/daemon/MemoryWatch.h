#pragma once

#include "api/DaemonState.h"
#include "control/MemoryLoop.h"
#include "kernel/CgroupLayout.h"
#include "kernel/MemoryPressure.h"
#include "libsystemd/IoSource.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nicer::daemon {

/**
 * What the memory rule (control/MemoryLoop.h) reads, and its hands on the work's memory:
 * - the stall of everything beside the work: the memory.pressure of the cgroups beside the work's slice
 *   (kernel::cgroupsBeside; the volunteer's session, their apps, other users, the services), the most of any
 *   of them since the last reading. The machine's own /proc/pressure/memory would count the work's waits
 *   too, and those grow exactly when the rule squeezes the work;
 * - PSI triggers on those of them this user may arm (their own session's, their user manager's, or all
 *   where the kernel lets it), which wake nicerd between periods when a stall begins (@p pressed);
 * - the work's memory (memory.current) and whether its pages can leave memory (swap, and the work's
 *   memory.swap.max);
 * - memory.reclaim of the work's slice (5.19+), to push its pages out at once.
 * Where the v2 tree or PSI is missing the rule has nothing to read, and the note says so.
 */
class MemoryWatch {
public:
    /// @p workCgroup: the work's cgroup on the v2 tree, whose memory is read and reclaimed; @p besideOf: the
    /// cgroup whose siblings and ancestors' siblings are "beside the work" (the work's own, or in the root
    /// idle slice the whole slice, which holds other users' work too).
    static Result<std::unique_ptr<MemoryWatch>> create(sd_event* event, const kernel::CgroupLayout& layout,
                                                       std::string workCgroup, std::string besideOf,
                                                       std::function<void()> pressed);
    ~MemoryWatch();
    MemoryWatch(const MemoryWatch&) = delete;
    MemoryWatch& operator=(const MemoryWatch&) = delete;

    /// The stall beside the work since the last reading and the work's memory; @p ceiling is the
    /// profile's MemoryHigh, @p instances how many the work has.
    control::MemoryReading read(std::uint64_t ceiling, int instances);
    /// Arms the triggers for a stall of @p allowed (memory-stall) within 2 s windows; none for 0.
    void setAllowed(double allowed);
    /// Asks the kernel to reclaim @p bytes of the work's memory now, where it has memory.reclaim and lets
    /// this user write it. The kernel reclaims in the writer's context, for up to a second when it finds
    /// little to take (the guest's check, without swap): so on a thread of its own, one request at a time,
    /// never in nicerd's loop. What it achieved, and how long it took, is logged at the next call or read.
    void reclaim(std::uint64_t bytes);
    /// Its part of the daemon's state: what it read, and why it reads less than it should.
    void describe(api::DaemonState& state) const;

    /// The trigger's window: a multiple of 2 s, which every kernel lets a user arm.
    static constexpr std::chrono::seconds kTriggerWindow{2};
    /// A trigger fires at this share of the stall allowed over its window: half, so that the stall a period's
    /// reading would act on (the allowed share of one period) wakes nicerd before that period ends.
    static constexpr double kTriggerShare = 0.5;

private:
    /// The last memory.reclaim, once it is done: its note and its log line.
    void collectReclaim();
    MemoryWatch(sd_event* event, std::filesystem::path root, std::string work, std::string besideOf,
                std::function<void()> pressed)
        : m_event(event)
        , m_root(std::move(root))
        , m_work(std::move(work))
        , m_besideOf(std::move(besideOf))
        , m_pressed(std::move(pressed)) {}
    /// Lists the cgroups beside the work again (sessions and users come and go), and arms the triggers anew
    /// where the list changed or @p rearm asks (a trigger's cgroup went away).
    void listBeside(bool rearm = false);
    std::filesystem::path file(const std::string& cgroup, const char* name) const;
    /// Arms a trigger on @p cgroup, or where this user may not, on those of its descendants (to kArmDepth)
    /// they may: whether any was armed; the first refusal kept in @p firstRefusal.
    bool arm(const std::string& cgroup, std::uint64_t stallUSec, std::uint64_t windowUSec, int depth,
             std::string& firstRefusal);
    /// How deep below a cgroup beside the work arm() looks: from /user.slice to
    /// user-1000.slice/user@1000.service/app.slice/app-firefox.scope.
    static constexpr int kArmDepth = 4;

    struct Trigger {
        kernel::PressureTrigger trigger;
        libsystemd::IoSource source;
    };

    sd_event* m_event;
    std::filesystem::path m_root; ///< the v2 tree
    std::string m_work;           ///< the work's slice, on the v2 tree
    std::string m_besideOf;       ///< what "beside the work" is beside
    std::function<void()> m_pressed;
    std::map<std::string, kernel::PressureTotals> m_beside; ///< the totals read last, per cgroup
    std::chrono::steady_clock::time_point m_lastRead{};
    std::chrono::steady_clock::time_point m_lastListed{};
    std::vector<std::unique_ptr<Trigger>> m_triggers;
    double m_allowed = -1.0; ///< what the triggers are armed for
    bool m_rearm = false;    ///< a trigger's cgroup went away: list and arm anew at the next reading
    std::string m_triggerNote;
    std::string m_reclaimNote;
    /// The write of memory.reclaim in flight: its outcome and milliseconds.
    std::future<std::pair<Result<void>, double>> m_reclaiming;
    std::uint64_t m_reclaimingBytes = 0;
    std::string m_readNote;
    std::string m_limitNote; ///< the tighter limit of an ancestor, which the work shares with the programs
    control::MemoryReading m_last;
    std::optional<std::uint64_t> m_oomKills; ///< memory.events' oom_kill of the work at the last reading
    std::string m_worst; ///< the cgroup beside the work that waited most in the last reading
};

} // namespace nicer::daemon
