#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>

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
    /// No input for the away delay, by the source's own count.
    bool idle = false;
    /// idle counts the desktop's own delay, not nicer's (logind's IdleHint, which the desktop sets).
    bool desktopDelay = false;
    /// The screen is locked (logind's LockedHint).
    bool locked = false;
    /// The time since the last input, where the source tells it.
    std::optional<std::chrono::milliseconds> sinceInput;
    /// Why the source does not answer, in plain words; empty when it answers.
    std::string note;

    bool operator==(const SourceReading&) const = default;
};

/// A source that does not answer, and why.
inline SourceReading notAnswering(std::string source, std::string note) {
    SourceReading r;
    r.source = std::move(source);
    r.note = std::move(note);
    return r;
}

} // namespace nicer::presence
