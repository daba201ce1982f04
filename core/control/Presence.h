#pragma once

#include "util/Keywords.h"

#include <array>
#include <optional>
#include <string_view>

namespace nicer::control {

/**
 * Whether the volunteer is at the machine: Here (input within the away delay, and the screen not locked),
 * Away (no input for the delay, or the screen locked), or Unknown (no source of the desktop answers: then
 * nicerd acts as while you're here, the side that asks least of the machine).
 */
enum class Presence { Unknown, Here, Away };

/// "unknown", "here", "away": the bus, `nicer status --json` and the history.
inline constexpr std::array<std::string_view, 3> kPresenceKeywords = {"unknown", "here", "away"};

constexpr std::string_view presenceName(Presence presence) {
    return keywordIn(kPresenceKeywords, presence);
}
/// The inverse of presenceName(), or nullopt.
constexpr std::optional<Presence> parsePresence(std::string_view text) {
    return valueIn<Presence>(kPresenceKeywords, text);
}

} // namespace nicer::control
