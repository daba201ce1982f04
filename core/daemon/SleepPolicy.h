#pragma once

#include "api/DaemonState.h"
#include "api/Sample.h"
#include "desktop/SleepInhibitor.h"

#include <systemd/sd-event.h>

#include <string>

namespace nicer::daemon {

/// Whether the machine is to stay awake in a period, and why, in the words `nicer status` and the tray use.
struct SleepVerdict {
    bool awake = false;
    std::string note; ///< "kept awake: the work runs on mains power", "may sleep: on battery"
};

/**
 * The sleep policy (keep-awake, docs/user-guide.md "Keeping the machine awake"): with @p keepAwake 1, the
 * machine stays awake while the work runs (@p last: not paused, by the volunteer or by a rule) on mains
 * power; on battery, or while the work is paused, or with @p keepAwake 0, it sleeps as it would without
 * nicer. A controller that stopped the work for a few periods of overload does not count as paused: the
 * work is still there and comes back.
 */
SleepVerdict sleepVerdict(int keepAwake, bool onBattery, const api::Sample& last);

/// Follows the sleep policy once a period, holding logind's sleep inhibitor (desktop/SleepInhibitor.h)
/// while it says awake, and releasing it at once when it no longer does or when nicerd ends.
class SleepPolicy {
public:
    explicit SleepPolicy(sd_event* event)
        : m_inhibitor(event, libsystemd::BusTarget::system(), libsystemd::BusTarget::user()) {}

    void follow(int keepAwake, bool onBattery, const api::Sample& last);
    /// KeepingAwake and SleepNote: the verdict and the route that holds the inhibitor, or why none does
    /// though it is wanted.
    void describe(api::DaemonState& state) const;

private:
    desktop::SleepInhibitor m_inhibitor;
    SleepVerdict m_verdict;
};

} // namespace nicer::daemon
