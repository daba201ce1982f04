#pragma once

#include "util/Result.h"

#include <filesystem>

namespace nicer::daemon {

/**
 * The pause kept across restarts of nicerd (an upgrade, a reboot): a file (DaemonConfig::pauseFile) whose
 * presence means the work starts paused. An empty path keeps nothing: the pause lasts while nicerd runs.
 */
/// Whether a pause made before this start still holds.
bool pauseKept(const std::filesystem::path& file);
/// Writes the file; the error says the pause holds only until nicerd restarts.
Result<void> keepPause(const std::filesystem::path& file);
/// Removes the file; the error says the work would start paused after a restart, and what to do.
Result<void> forgetPause(const std::filesystem::path& file);

} // namespace nicer::daemon
