#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace nicer::presence {

/**
 * What one source of the desktop says of the volunteer's input now: a source that counts the time since the
 * last input (XScreenSaver, GNOME's idle monitor) or one that tells when the away delay has passed without
 * input and when input came again (ext-idle-notify-v1, logind's IdleHint).
 */
struct SourceReading {
    /// Who answers, in words: "XScreenSaver on :0", "GNOME Shell's idle monitor", "logind (session 3)".
    std::string source;
    /// The source works and has answered; when false, note says why.
    bool answers = false;
    /// No input for the away delay, by the source's own count (logind's IdleHint: the desktop's own delay).
    bool idle = false;
    /// The screen is locked (logind's LockedHint).
    bool locked = false;
    /// The time since the last input, where the source tells it.
    std::optional<std::chrono::milliseconds> sinceInput;
    /// Why the source does not answer, in plain words; empty when it answers.
    std::string note;

    bool operator==(const SourceReading&) const = default;
};

} // namespace nicer::presence
