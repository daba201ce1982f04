#pragma once

#include "presence/PresenceVerdict.h"
#include "util/WallClock.h"

#include <chrono>
#include <optional>

namespace nicer::presence {

/**
 * The wall-clock time of the volunteer's last input, as well as the sources tell it, for programs that count
 * "in use" from it (BOINC's /idle_detect_shmem: presence/IdleDetectShmem.h). Where the deciding source counts
 * the time since the last input (XScreenSaver, GNOME's idle monitor) it is that; where it only says here or
 * away (ext-idle-notify-v1, logind's hint, a locked screen), here is input now, and away is input the away
 * delay before nicer found the volunteer away, never later: so that a program with the same delay agrees with
 * nicer's verdict, and the time then grows as the volunteer stays away. Not known while the presence is not.
 */
class LastInput {
public:
    /// Once a period: the last input by @p verdict at @p now, with the away delay @p delay.
    std::optional<wallclock::TimePoint> update(const PresenceVerdict& verdict, wallclock::TimePoint now,
                                               std::chrono::milliseconds delay);

private:
    std::optional<wallclock::TimePoint> m_last;
    bool m_away = false;
};

} // namespace nicer::presence
