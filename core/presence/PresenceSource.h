#pragma once

#include "presence/SourceReading.h"

#include <chrono>

namespace nicer::presence {

/**
 * One source of the desktop's input on nicerd's loop (presence/PresenceWatch.h composes them). Each is made
 * with a `changed` callback, called from the loop whenever reading() changed (never from reading() itself),
 * which must not destroy the source. None blocks the loop: a compositor, an X server or a bus that hangs
 * leaves its source waiting, and says so in its reading.
 */
class PresenceSource {
public:
    virtual ~PresenceSource() = default;
    /// What it says now.
    virtual SourceReading reading() const = 0;
    /// The away delay from now on. A source that waits for it itself (a compositor's idle timer, an idle
    /// watch) asks anew; one that reports the time since input uses it at once.
    virtual void setDelay(std::chrono::milliseconds delay) = 0;
    /// Once a period: a source whose link ended (the compositor, the X server or the bus went away) tries
    /// again here, at most as often as it chooses.
    virtual void poll() {}
};

} // namespace nicer::presence
