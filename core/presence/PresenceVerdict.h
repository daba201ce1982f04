#pragma once

#include "control/Presence.h"
#include "presence/SourceReading.h"

#include <chrono>
#include <optional>
#include <span>
#include <string>

namespace nicer::presence {

/// Whether the volunteer is at the machine, which source said so, and why, in words.
struct PresenceVerdict {
    control::Presence presence = control::Presence::Unknown;
    /// The source that answered ("XScreenSaver on :0"); empty when none did.
    std::string source;
    /// "input within 3 min", "no input for 3 min" (the delay: the words change only with the verdict), "the
    /// screen is locked", "the desktop says it is idle", or, when not known, why each source does not answer.
    std::string reason;
    /// The time since the last input, where the source that decided tells it (not for a lock).
    std::optional<std::chrono::milliseconds> sinceInput;

    bool operator==(const PresenceVerdict&) const = default;
};

/**
 * The verdict from the sources' readings, in the order they are trusted: a locked screen (any source that
 * answers and says so) is away at once; else the first source that answers decides, here or away; when none
 * answers the presence is not known, and the reason joins their notes. A source that tells the time since the
 * last input is away once that reaches @p delay.
 */
PresenceVerdict decide(std::span<const SourceReading> readings, std::chrono::milliseconds delay);

} // namespace nicer::presence
