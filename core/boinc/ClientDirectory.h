#pragma once

// The files nicer keeps in a BOINC client's data directory, so that the client never fights nicer's
// controller and gets back exactly what the volunteer had when nicer lets it go.
//
// Before the client starts, nicer writes its preferences override (GlobalPrefsOverride.h) into
// global_prefs_override.xml, having saved the volunteer's own override beside it
// (global_prefs_override.xml.nicer-saved; an empty copy stands for "there was none"). The client thus starts
// with nicer's settings in force, before its first scheduling decision. When the client stops under nicer
// (the workload changes, nicerd exits), the saved override is put back. A saved copy that is still there at
// the next start (nicerd was killed) is the volunteer's, and is kept: what is in the override file then is
// nicer's own from the last run.

#include "util/Result.h"

#include <filesystem>
#include <string>

namespace nicer::boinc {

inline constexpr const char* kOverrideFile = "global_prefs_override.xml";
inline constexpr const char* kSavedOverrideFile = "global_prefs_override.xml.nicer-saved";
inline constexpr const char* kPasswordFile = "gui_rpc_auth.cfg";

/**
 * Gets @p dir ready for a BOINC client under nicer: creates it, gives it a random GUI RPC password when it
 * has none (mode 0600, as the client's own), saves the volunteer's override once and writes nicer's. Fails,
 * changing nothing, when the volunteer's override is not readable XML: the client would then run with
 * BOINC's defaults, which fight nicer. The message names the file and says what to do.
 */
Result<void> prepareClientDirectory(const std::filesystem::path& dir);

/// The volunteer changed the override while the client ran (in the BOINC Manager, which replaces the
/// whole file): @p volunteerOverride becomes the one put back later.
Result<void> rememberVolunteerOverride(const std::filesystem::path& dir,
                                       const std::string& volunteerOverride);

/// The override the volunteer had, as saved; empty when there was none or nothing was saved.
Result<std::string> savedVolunteerOverride(const std::filesystem::path& dir);

/// Puts the volunteer's override back (removes the file when they had none) and forgets the saved copy.
/// Nothing to do when nothing was saved.
Result<void> restoreVolunteerOverride(const std::filesystem::path& dir);

} // namespace nicer::boinc
