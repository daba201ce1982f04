#include "presence/PresenceVerdict.h"

#include "util/WallClock.h"

#include <algorithm>

namespace nicer::presence {

PresenceVerdict decide(std::span<const SourceReading> readings, std::chrono::milliseconds delay) {
    using control::Presence;
    for (const auto& r : readings) {
        if (r.answers && r.locked) {
            return {Presence::Away, r.source, "the screen is locked", {}};
        }
    }
    for (const auto& r : readings) {
        if (!r.answers) {
            continue;
        }
        if (r.sinceInput) {
            const bool away = *r.sinceInput >= delay;
            return {away ? Presence::Away : Presence::Here, r.source,
                    (away ? "no input for " : "input within ") + wallclock::durationText(delay),
                    r.sinceInput};
        }
        if (r.desktopDelay) {
            return {r.idle ? Presence::Away : Presence::Here,
                    r.source,
                    r.idle ? "the desktop says it is idle" : "the desktop says it is in use",
                    {}};
        }
        return {r.idle ? Presence::Away : Presence::Here,
                r.source,
                (r.idle ? "no input for " : "input within ") + wallclock::durationText(delay),
                {}};
    }
    std::string why;
    for (const auto& r : readings) {
        why += (why.empty() ? "" : "; ") + r.note;
    }
    return {Presence::Unknown, {}, why.empty() ? "no source of the desktop's input was found" : why, {}};
}

} // namespace nicer::presence
