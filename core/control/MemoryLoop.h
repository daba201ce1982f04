#pragma once

#include <cstdint>
#include <string>

namespace nicer::control {

/// What the memory rule reads in a period (daemon/MemoryWatch.h gathers it).
struct MemoryReading {
    /// The share of the period in which programs outside the work waited on memory: PSI's "some" of the
    /// cgroups beside the work (kernel::cgroupsBeside), the most of any of them, 0..1.
    double outsideStall = 0.0;
    std::uint64_t workBytes = 0;    ///< the work's memory now (memory.current of its slice)
    std::uint64_t ceilingBytes = 0; ///< the profile's MemoryHigh: the outer fence the rule never lifts
    /// The work's pages can leave memory: the machine has swap and the work may use it. Where they cannot, a
    /// frozen work keeps them, and only stopping an instance frees them.
    bool workCanSwap = false;
    int instances = 1; ///< how many instances the work has: the most the rule may stop
    /// The machine's memory available (MemAvailable) and its size (MemTotal): the rule gives memory back
    /// only where there is room. 0 and 0: not known, and it gives back on calm alone.
    std::uint64_t availableBytes = 0;
    std::uint64_t totalBytes = 0;
    /// The work's processes the kernel's OOM killer took since the last reading (memory.events): memory ran
    /// out faster than any reading (a program taking 800 MiB a second without swap). Each counts as an
    /// instance the rule stopped, so that it is not started again into the same shortage.
    std::uint64_t oomKills = 0;
};

/// How far the memory rule holds the work, from nothing to stopped instances.
enum class MemoryStage {
    Free,       ///< the profile's MemoryHigh alone
    Reclaiming, ///< the work's memory.high lowered, its pages reclaimed first
    Frozen,     ///< the pressure stayed: the work is frozen as well
    Stopped,    ///< it stayed still: instances are stopped to free their memory
};

/// "", "reclaiming", "frozen", "stopped": the bus and `nicer status --json` use these words.
const char* memoryStageName(MemoryStage stage);

/// The memory rule's hold in a period.
struct MemoryHold {
    MemoryStage stage = MemoryStage::Free;
    std::uint64_t limitBytes = 0;   ///< the work's memory.high the rule sets; 0 while free
    std::uint64_t reclaimBytes = 0; ///< what to ask the kernel to reclaim from the work now (memory.reclaim)
    double cap = 1.0;               ///< the work's CPU: 0 while frozen, given back smoothly after
    int instancesStopped = 0;       ///< the work's instances kept stopped, the last ones first
    /// The reading pressed the rule: over the stall allowed, short of memory (MemoryLoop::low) or a kill.
    bool pressed = false;
    std::string
        reason; ///< "your programs waited on memory 6% of the time: the work's memory held to 1.2 GiB"
};

/// The memory loop's constants (docs/controller.md, "The memory rule").
struct MemoryTuning {
    /// The share memory.high comes down by in a period at twice the stall allowed, from the work's memory
    /// or the limit, whichever is lower; in proportion to the excess, between these bounds.
    double shrinkLeast = 0.05;
    double shrinkMost = 0.25;
    /// The work never gets less than this: below, freezing is the answer.
    std::uint64_t floorBytes = 64ULL << 20;
    /// Seconds the stall stays over what is allowed before the work is frozen as well: sooner where its pages
    /// cannot leave memory, since a lower memory.high then frees only its page cache.
    double freezeAfter = 5.0;
    double freezeAfterNoSwap = 2.0;
    /// Seconds between two instances stopped while the stall stays frozen. Where the work's pages cannot
    /// leave memory the first goes at once with the freeze; where they can, after swapFirst seconds frozen.
    double stopEvery = 5.0;
    double swapFirst = 20.0;
    /// Seconds of calm (under half the stall allowed) before the memory is given back.
    double calmBefore = 10.0;
    /// The share of the ceiling given back each second of calm: all of it in 100 s.
    double growPerSecond = 0.01;
    /// memory.high rises, and a stopped instance starts again, only while the machine has this share of its
    /// memory available beyond what the step or the instance takes: calm alone would probe into the stall
    /// again and again while the programs still need their memory (a stall each probe, an instance stopped
    /// and started every few seconds).
    double roomShare = 0.10;
    /// The machine's memory available (MemAvailable) under this share counts as a stall, whatever PSI says:
    /// the kernel's stall comes late, after kswapd reclaimed in the background (with swap), or not before
    /// its cliff (without). With swap the rule then lowers memory.high; without, where a lower memory.high
    /// frees nothing, the kernel is about to kill, and the rule freezes the work and stops an instance at
    /// once, from a period or a trigger (an orderly stop, not SIGKILL).
    double scarceShare = 0.05;
    /// The CPU cap's climb each second after a freeze; the ended instances start again one each resume
    /// delay of calm after the thaw.
    double thawPerSecond = 0.1;
};

/**
 * The memory rule (docs/controller.md, "The memory rule"): it takes memory from the work first when programs
 * outside it wait on memory. In a period where the outside's stall is over @p allowed, the work's
 * memory.high comes down from what it holds, in proportion to the excess (the kernel then reclaims the
 * work's pages first, and memory.reclaim asks it at once; where they can swap, the work's CPU is held at 0
 * meanwhile, so that it does not fault them back in); if the stall stays for freezeAfter, the work is
 * frozen too (sooner without swap), and where its pages cannot leave memory an instance is stopped with the
 * freeze and another every stopEvery while it stays, since a frozen task keeps its memory (with swap, only
 * after swapFirst). Once the outside is calm, the work thaws after the resume delay and climbs back
 * smoothly, the stopped instances start again one each resume delay, and memory.high rises slowly back to
 * the ceiling, where the rule lets go. Pure: fed one period at a time.
 */
class MemoryLoop {
public:
    explicit MemoryLoop(MemoryTuning tuning = {})
        : m_tuning(tuning) {}

    /// One period of @p seconds with @p allowed the outside's stall share it holds under (memory-stall);
    /// @p resumeDelay is the wait after a freeze, in seconds.
    MemoryHold step(const MemoryReading& now, double allowed, double seconds, double resumeDelay);
    /// At once, between two periods (a PSI trigger fired): lowers memory.high as a period over @p allowed
    /// would, without counting time toward a freeze; the hold as it stands otherwise.
    MemoryHold urgent(const MemoryReading& now, double allowed);
    /// Back to free, as after a start.
    void reset() { *this = MemoryLoop(m_tuning); }

private:
    struct Assessment {
        bool pressed = false; ///< over the stall allowed, short of memory (low()), or a kill
        bool calm = false;    ///< under half the stall allowed, and neither short nor killed
    };
    /// What @p now says, the same for a period and a trigger; an OOM kill is kept as a stop here.
    Assessment assess(const MemoryReading& now, double allowed);
    /// memory.high down from what the work holds, in proportion to the stall's excess over @p allowed, and
    /// while memory is low() by at least what the machine lacks of roomShare available.
    void shrink(const MemoryReading& now, double allowed);
    MemoryHold hold(const MemoryReading& now, bool pressed, bool calm) const;
    /// With swap, the work's CPU held at 0 while it holds more than its memory.high: its pages then leave
    /// memory at once, since it does not touch them; it climbs back at thawPerSecond once calm, with no
    /// resume delay (it is not frozen for the stall, only for the write-out).
    void holdStill(const MemoryReading& now);
    /// The machine has room for @p bytes more and roomShare to spare (or its memory is not known).
    bool room(const MemoryReading& now, std::uint64_t bytes) const;
    /// Less than scarceShare of the machine's memory available.
    bool low(const MemoryReading& now) const;
    /// low(), and no swap to take the work's pages.
    bool scarce(const MemoryReading& now) const;
    /// One more instance stopped, the last first; what it held is remembered for its start again.
    void stopOne(const MemoryReading& now);
    /// The instances the OOM killer took kept stopped, and the work frozen, as if the rule had stopped them.
    void keepKilled(const MemoryReading& now);

    MemoryTuning m_tuning;
    std::uint64_t m_limit = 0; ///< 0: free
    double m_pressedFor = 0.0;
    double m_calmFor = 0.0;
    double m_cap = 1.0;
    bool m_frozen = false;
    int m_stopped = 0;
    double m_sinceStop = 0.0; ///< seconds since the last instance stopped or started, or since the freeze
    std::uint64_t m_instanceBytes = 0; ///< what an instance held when the rule stopped one
    bool m_waitingForRoom = false;     ///< calm, but the machine has no room to give the work back
};

} // namespace nicer::control
