#include "control/MemoryLoop.h"

#include "util/Text.h"

#include <algorithm>
#include <cmath>

namespace nicer::control {

const char* memoryStageName(MemoryStage stage) {
    switch (stage) {
    case MemoryStage::Free:
        return "";
    case MemoryStage::Reclaiming:
        return "reclaiming";
    case MemoryStage::Frozen:
        return "frozen";
    case MemoryStage::Stopped:
        return "stopped";
    }
    return "";
}

MemoryHold MemoryLoop::step(const MemoryReading& now, double allowed, double seconds, double resumeDelay) {
    if (allowed <= 0.0 || now.ceilingBytes == 0) {
        reset();
        return {};
    }
    const auto& t = m_tuning;
    const auto [pressed, calm] = assess(now, allowed);
    m_sinceStop += seconds;
    if (pressed) {
        m_pressedFor += seconds;
        m_calmFor = 0.0;
        shrink(now, allowed);
        holdStill(now);
        if ((m_pressedFor >= (now.workCanSwap ? t.freezeAfter : t.freezeAfterNoSwap) || scarce(now)) &&
            !m_frozen) {
            m_frozen = true;
            m_sinceStop = 0.0;
        }
        if (m_frozen) {
            m_cap = 0.0;
            // A frozen task keeps its pages; without swap only a stopped one gives them back.
            const double wait = m_stopped == 0 ? (now.workCanSwap ? t.swapFirst : 0.0) : t.stopEvery;
            if (m_stopped < std::max(1, now.instances) && m_sinceStop >= wait) {
                stopOne(now);
            }
        }
    } else {
        m_pressedFor = std::max(0.0, m_pressedFor - seconds);
        if (calm) {
            m_calmFor += seconds;
        }
        if (m_frozen && m_calmFor >= resumeDelay) {
            m_frozen = false;
            m_sinceStop = 0.0;
        }
        m_waitingForRoom = false;
        if (!m_frozen) {
            m_cap = std::min(1.0, m_cap + t.thawPerSecond * seconds);
            if (calm && m_stopped > 0 && m_sinceStop >= resumeDelay) {
                if (room(now, m_instanceBytes)) {
                    --m_stopped;
                    m_sinceStop = 0.0;
                } else {
                    m_waitingForRoom = true;
                }
            }
            const auto step =
                static_cast<std::uint64_t>(static_cast<double>(now.ceilingBytes) * t.growPerSecond * seconds);
            if (m_limit > 0 && m_calmFor >= t.calmBefore) {
                if (room(now, step)) {
                    m_limit += step;
                    if (m_limit >= now.ceilingBytes) {
                        m_limit = 0;
                    }
                } else {
                    m_waitingForRoom = true;
                }
            }
        }
        if (m_stopped == 0 && m_limit == 0) {
            m_instanceBytes = 0;
        }
    }

    return hold(now, pressed, calm);
}

MemoryHold MemoryLoop::urgent(const MemoryReading& now, double allowed) {
    if (allowed <= 0.0 || now.ceilingBytes == 0) {
        return {};
    }
    const auto [pressed, calm] = assess(now, allowed);
    if (pressed) {
        shrink(now, allowed);
        holdStill(now);
        if (scarce(now) && m_stopped == 0) {
            m_frozen = true;
            m_cap = 0.0;
            stopOne(now);
        }
    }
    return hold(now, pressed, calm);
}

MemoryLoop::Assessment MemoryLoop::assess(const MemoryReading& now, double allowed) {
    // Without swap the kernel gives no stall before its cliff: the page cache goes quietly, then the
    // desktop hangs for seconds and the OOM killer acts (the guest: "some" 0 down to 27 MiB available, then
    // 14 s without a reading). So there, little memory available counts as a stall, as does a kill.
    const bool killed = now.oomKills > 0;
    if (killed) {
        keepKilled(now);
    }
    // With swap too, the kernel's stall comes late: the bench's program allocated beside the work until
    // memory ran out, and the first trigger fired 4 to 5 s into a pass that takes 2.4 s alone, since kswapd
    // reclaims in the background before anyone waits. Little memory available comes first: the rule then
    // lowers memory.high (and holds the work still while its pages leave), without stopping anything.
    const bool shortOfMemory = low(now) || killed;
    return {.pressed = now.outsideStall > allowed || shortOfMemory,
            .calm = now.outsideStall < allowed / 2.0 && !shortOfMemory};
}

void MemoryLoop::keepKilled(const MemoryReading& now) {
    m_frozen = true;
    m_cap = 0.0;
    const int instances = std::max(1, now.instances);
    const int running = instances - m_stopped;
    // What a killed instance held: the rest's share where some run on, else the ceiling's.
    const auto each =
        running > static_cast<int>(now.oomKills) && now.workBytes > 0
            ? now.workBytes / static_cast<std::uint64_t>(running - static_cast<int>(now.oomKills))
            : now.ceilingBytes / static_cast<std::uint64_t>(instances);
    m_instanceBytes = std::max(m_instanceBytes, each);
    m_stopped = std::min(instances, m_stopped + static_cast<int>(std::min<std::uint64_t>(now.oomKills, 64)));
    m_sinceStop = 0.0;
}

void MemoryLoop::stopOne(const MemoryReading& now) {
    const auto running = static_cast<std::uint64_t>(std::max(1, now.instances - m_stopped));
    m_instanceBytes = std::max(m_instanceBytes, now.workBytes / running);
    ++m_stopped;
    m_sinceStop = 0.0;
}

bool MemoryLoop::low(const MemoryReading& now) const {
    return now.totalBytes > 0 && static_cast<double>(now.availableBytes) <
                                     m_tuning.scarceShare * static_cast<double>(now.totalBytes);
}

bool MemoryLoop::scarce(const MemoryReading& now) const {
    return !now.workCanSwap && low(now);
}

void MemoryLoop::shrink(const MemoryReading& now, double allowed) {
    const auto& t = m_tuning;
    // Down from what the work holds (a limit far above it would take nothing), in proportion to the excess;
    // the kernel reclaims the rest first.
    const auto floor = std::min(t.floorBytes, now.ceilingBytes);
    const double by = std::clamp(t.shrinkLeast * now.outsideStall / allowed, t.shrinkLeast, t.shrinkMost);
    const auto from = std::min(m_limit == 0 ? now.ceilingBytes : m_limit, std::max(now.workBytes, floor));
    double to = static_cast<double>(from) * (1.0 - by);
    if (low(now)) {
        // Short of memory, the stall says little (it comes late or not at all): what the machine lacks of
        // roomShare available is what the work gives, at once. A few percent a period freed 25 to 40 MiB a
        // second in the bench, against a program that took 550 MiB a second.
        const double lacking = m_tuning.roomShare * static_cast<double>(now.totalBytes) -
                               static_cast<double>(now.availableBytes);
        to = std::min(to, static_cast<double>(from) - lacking);
    }
    m_limit = std::max(floor, static_cast<std::uint64_t>(std::max(0.0, to)));
}

void MemoryLoop::holdStill(const MemoryReading& now) {
    // A work that runs faults its pages back in as fast as the kernel writes them out: the guest's bench
    // saw memory.reclaim take 4.3 s for 178 MiB of a work that kept touching them, while the program waited.
    if (now.workCanSwap && now.workBytes > m_limit) {
        m_cap = 0.0;
    }
}

bool MemoryLoop::room(const MemoryReading& now, std::uint64_t bytes) const {
    if (now.totalBytes == 0) {
        return true;
    }
    return static_cast<double>(now.availableBytes) >=
           m_tuning.roomShare * static_cast<double>(now.totalBytes) + static_cast<double>(bytes);
}

MemoryHold MemoryLoop::hold(const MemoryReading& now, bool pressed, bool calm) const {
    MemoryHold hold;
    hold.limitBytes = m_limit;
    hold.reclaimBytes = pressed && now.workBytes > m_limit ? now.workBytes - m_limit : 0;
    hold.cap = m_cap;
    hold.instancesStopped = m_stopped;
    hold.pressed = pressed;
    hold.stage = m_stopped > 0             ? MemoryStage::Stopped
                 : m_frozen || m_cap < 1.0 ? MemoryStage::Frozen
                 : m_limit > 0             ? MemoryStage::Reclaiming
                                           : MemoryStage::Free;
    if (hold.stage == MemoryStage::Free) {
        return hold;
    }
    const std::string waited =
        now.oomKills > 0 ? "the kernel's OOM killer took some of the work"
        : low(now)       ? "only " + text::humanBytes(static_cast<double>(now.availableBytes)) +
                         " of memory available" + (now.workCanSwap ? "" : " and no swap")
                   : "programs beside the work waited on memory " +
                         text::shortNumber(std::round(now.outsideStall * 1000.0) / 10.0) + "% of the time";
    std::string what;
    if (m_stopped > 0) {
        what = (m_stopped == 1 ? "1 instance" : std::to_string(m_stopped) + " instances") +
               " stopped to free " + (m_stopped == 1 ? "its" : "their") + " memory" +
               (now.workCanSwap ? "" : " (no swap to take it)");
    }
    if (m_frozen) {
        what += std::string(what.empty() ? "" : ", ") + "the work frozen";
    } else if (m_cap == 0.0) {
        what += std::string(what.empty() ? "" : ", ") + "the work held still while its pages leave";
    } else if (m_cap < 1.0) {
        what += std::string(what.empty() ? "" : ", ") + "the work thawing";
    }
    if (m_limit > 0) {
        what += std::string(what.empty() ? "" : ", ") + "its memory held to " +
                text::humanBytes(static_cast<double>(m_limit));
    }
    if (m_waitingForRoom && !pressed) {
        what +=
            ", until " + text::shortNumber(m_tuning.roomShare * 100.0) + "% of the machine's memory is free";
    }
    hold.reason = (pressed ? waited : calm ? "memory calm again" : waited) + ": " + what;
    return hold;
}

} // namespace nicer::control
