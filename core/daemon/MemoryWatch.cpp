#include "daemon/MemoryWatch.h"

#include "kernel/MemInfo.h"
#include "util/Log.h"
#include "util/Text.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sys/epoll.h>
#include <utility>

namespace nicer::daemon {

namespace {

/// How often the cgroups beside the work are listed again: sessions, users and services come and go.
constexpr std::chrono::seconds kListEvery{10};

} // namespace

Result<std::unique_ptr<MemoryWatch>> MemoryWatch::create(sd_event* event, const kernel::CgroupLayout& layout,
                                                         std::string workCgroup, std::string besideOf,
                                                         std::function<void()> pressed) {
    if (!layout.unifiedRoot()) {
        return Error{"no cgroup v2 tree, so no memory pressure of the programs beside the work to read"};
    }
    if (workCgroup.empty()) {
        return Error{"the work's slice has no cgroup"};
    }
    auto watch = std::unique_ptr<MemoryWatch>(new MemoryWatch(
        event, *layout.unifiedRoot(), std::move(workCgroup), std::move(besideOf), std::move(pressed)));
    if (auto own = kernel::readPressure(watch->file(watch->m_work, "memory.pressure")); !own) {
        return Error{"this kernel keeps no memory pressure of a cgroup (PSI: " + own.error().message + ")"};
    }
    watch->listBeside();
    watch->m_lastRead = std::chrono::steady_clock::now();
    return watch;
}

MemoryWatch::~MemoryWatch() = default;

std::filesystem::path MemoryWatch::file(const std::string& cgroup, const char* name) const {
    return m_root / std::filesystem::path(cgroup).relative_path() / name;
}

void MemoryWatch::listBeside(bool rearm) {
    m_lastListed = std::chrono::steady_clock::now();
    auto beside = kernel::cgroupsBeside(m_root, m_besideOf);
    if (!beside) {
        m_readNote = "cannot tell what runs beside the work: " + beside.error().message;
        return;
    }
    std::map<std::string, kernel::PressureTotals> totals;
    for (const auto& cgroup : *beside) {
        if (auto known = m_beside.find(cgroup); known != m_beside.end()) {
            totals.emplace(cgroup, known->second);
        } else if (auto read = kernel::readPressure(file(cgroup, "memory.pressure"))) {
            totals.emplace(cgroup, *read);
        }
    }
    const bool changed = totals.size() != m_beside.size() ||
                         !std::equal(totals.begin(), totals.end(), m_beside.begin(),
                                     [](const auto& a, const auto& b) { return a.first == b.first; });
    m_beside = std::move(totals);
    if ((changed || rearm) && m_allowed > 0.0) {
        const double allowed = m_allowed;
        m_allowed = -1.0; // setAllowed() arms anew only for another value
        setAllowed(allowed);
    }
}

control::MemoryReading MemoryWatch::read(std::uint64_t ceiling, int instances) {
    collectReclaim();
    const auto now = std::chrono::steady_clock::now();
    if (m_rearm || now - m_lastListed >= kListEvery) {
        listBeside(std::exchange(m_rearm, false));
    }
    const double seconds = std::chrono::duration<double>(now - m_lastRead).count();
    m_lastRead = now;
    control::MemoryReading reading;
    double worst = 0.0;
    for (auto& [cgroup, last] : m_beside) {
        auto totals = kernel::readPressure(file(cgroup, "memory.pressure"));
        if (!totals) {
            continue; // gone since the listing: the next one drops it
        }
        if (seconds > 0.0 && totals->someUSec >= last.someUSec) {
            const double stall = static_cast<double>(totals->someUSec - last.someUSec) / 1e6 / seconds;
            if (stall > worst) {
                worst = stall;
                m_worst = cgroup;
            }
        }
        last = *totals;
    }
    reading.outsideStall = std::clamp(worst, 0.0, 1.0);
    reading.workBytes = kernel::readCgroupCount(file(m_work, "memory.current")).value_or(0);
    reading.ceilingBytes = ceiling;
    reading.instances = instances;
    const auto figures = kernel::readMemoryFigures();
    // memory.swap.max is "max" unless limited; a work held to no swap at all keeps its pages.
    const auto swapMax = kernel::readCgroupCount(file(m_work, "memory.swap.max"));
    reading.workCanSwap = figures && figures->swap > 0 && swapMax.value_or(1) > 0;
    if (figures) {
        reading.availableBytes = figures->available;
        reading.totalBytes = figures->total;
    }
    // An ancestor's limit (an administrator's MemoryMax= on the user's slice, a container's) is the machine
    // the work and the programs beside it share: room and shortage are counted within it.
    const auto shared = kernel::tightestSharedLimit(m_root, m_besideOf);
    m_limitNote.clear();
    if (shared && (!figures || shared->available < figures->available)) {
        reading.availableBytes = shared->available;
        reading.totalBytes = figures ? std::min(figures->total, shared->limit) : shared->limit;
        m_limitNote = "the work and the programs beside it share " + shared->cgroup + "'s limit of " +
                      text::humanBytes(static_cast<double>(shared->limit)) + ", " +
                      text::humanBytes(static_cast<double>(shared->available)) + " of it available";
    }
    // memory.events counts the work's OOM kills, its descendants' included.
    if (auto kills = kernel::readStatField(file(m_work, "memory.events"), "oom_kill")) {
        reading.oomKills = m_oomKills && *kills > *m_oomKills ? *kills - *m_oomKills : 0;
        m_oomKills = *kills;
    }
    m_last = reading;
    return reading;
}

void MemoryWatch::setAllowed(double allowed) {
    if (allowed == m_allowed) {
        return;
    }
    m_allowed = allowed;
    m_triggers.clear();
    m_triggerNote.clear();
    if (allowed <= 0.0) {
        return;
    }
    const auto window = std::chrono::duration_cast<std::chrono::microseconds>(kTriggerWindow).count();
    const auto stall = std::max<std::int64_t>(
        1000, static_cast<std::int64_t>(allowed * kTriggerShare * static_cast<double>(window)));
    std::string firstRefusal;
    std::size_t unarmed = 0;
    for (const auto& [cgroup, totals] : m_beside) {
        if (!arm(cgroup, static_cast<std::uint64_t>(stall), static_cast<std::uint64_t>(window), 0,
                 firstRefusal)) {
            ++unarmed;
        }
    }
    if (m_triggers.empty()) {
        m_triggerNote =
            "no PSI trigger could be armed, so the memory rule reads the pressure once a period (" +
            (firstRefusal.empty() ? std::string("nothing runs beside the work") : firstRefusal) + ")";
    } else if (unarmed > 0) {
        m_triggerNote = "PSI triggers wake nicerd on " + std::to_string(m_triggers.size()) +
                        " cgroups beside the work; " + std::to_string(unarmed) + " of the " +
                        std::to_string(m_beside.size()) +
                        " beside it have none this user may arm, and are read once a period";
    }
}

bool MemoryWatch::arm(const std::string& cgroup, std::uint64_t stallUSec, std::uint64_t windowUSec, int depth,
                      std::string& firstRefusal) {
    auto trigger = kernel::PressureTrigger::open(file(cgroup, "memory.pressure"), stallUSec, windowUSec);
    if (!trigger) {
        if (firstRefusal.empty()) {
            firstRefusal = trigger.error().message;
        }
        // Another user's cgroup (root's user.slice): this user's own ones below it may be armed, the
        // volunteer's session and apps among them.
        bool any = false;
        std::error_code ec;
        if (depth < kArmDepth) {
            for (const auto& entry : std::filesystem::directory_iterator(
                     m_root / std::filesystem::path(cgroup).relative_path(), ec)) {
                if (entry.is_directory(ec)) {
                    any = arm(cgroup + "/" + entry.path().filename().string(), stallUSec, windowUSec,
                              depth + 1, firstRefusal) ||
                          any;
                }
            }
        }
        return any;
    }
    auto armed = std::make_unique<Trigger>(Trigger{std::move(*trigger), {}});
    auto* self = armed.get();
    auto source = libsystemd::IoSource::create(m_event, armed->trigger.fd(), EPOLLPRI,
                                               [this, self](std::uint32_t revents) {
                                                   // A removed cgroup's file stays in error: off, and the
                                                   // next reading lists and arms anew.
                                                   if ((revents & (EPOLLERR | EPOLLHUP)) != 0) {
                                                       self->source.setEnabled(false);
                                                       m_rearm = true;
                                                       return;
                                                   }
                                                   if ((revents & EPOLLPRI) != 0 && m_pressed) {
                                                       m_pressed();
                                                   }
                                               });
    if (!source) {
        firstRefusal = source.error().message;
        return false;
    }
    armed->source = std::move(*source);
    m_triggers.push_back(std::move(armed));
    return true;
}

void MemoryWatch::reclaim(std::uint64_t bytes) {
    collectReclaim();
    if (bytes == 0 || m_reclaiming.valid()) {
        return; // nothing to ask, or the last request is still in the kernel
    }
    m_reclaimingBytes = bytes;
    m_reclaiming = std::async(std::launch::async, [path = file(m_work, "memory.reclaim"), bytes] {
        const auto started = std::chrono::steady_clock::now();
        auto reclaimed = kernel::reclaimMemory(path, bytes);
        return std::pair{
            std::move(reclaimed),
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count()};
    });
}

void MemoryWatch::collectReclaim() {
    if (!m_reclaiming.valid() ||
        m_reclaiming.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        return;
    }
    auto [reclaimed, ms] = m_reclaiming.get();
    m_reclaimNote = reclaimed ? std::string() : reclaimed.error().message;
    if (reclaimed) {
        log::info() << "nicerd: memory.reclaim of "
                    << text::humanBytes(static_cast<double>(m_reclaimingBytes)) << " of the work took "
                    << text::shortNumber(std::round(ms)) << " ms";
    }
}

void MemoryWatch::describe(api::DaemonState& state) const {
    // Rounded, so that the bus announces a change the volunteer could see, not every page.
    state.memoryStallBeside = std::round(m_last.outsideStall * 1000.0) / 1000.0;
    state.memoryStallWhere = state.memoryStallBeside > 0.0 ? m_worst : std::string();
    state.workMemory = m_last.workBytes >> 20 << 20;
    state.workCanSwap = m_last.workCanSwap;
    std::string note = m_readNote;
    for (const auto* part : {&m_limitNote, &m_triggerNote, &m_reclaimNote}) {
        if (!part->empty()) {
            note += (note.empty() ? "" : "; ") + *part;
        }
    }
    state.memoryNote = note;
}

} // namespace nicer::daemon
