#pragma once

#include "api/PresetInfo.h"
#include "util/Result.h"
#include "workload/WorkloadSpec.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::workload {

/// The id of a command given to nicerd itself (after `--` or as `workload = [...]` in nicerd.conf).
inline constexpr std::string_view kCustomPreset = "custom";
/// In a preset's argv, stands for the preset's own directory under nicer's data directory.
inline constexpr std::string_view kPresetDirArgument = "{dir}";

/// A volunteer-computing program nicer knows how to run, chosen by its id at run time.
struct WorkloadPreset {
    std::string id;                ///< "demo", "boinc", "folding"
    std::string name;              ///< for people, e.g. "BOINC client"
    std::string description;       ///< one or two sentences: what it computes and how to set it up
    std::vector<std::string> argv; ///< kPresetDirArgument is replaced by the preset's directory
    bool onePerCpu = false;        ///< one copy per CPU; else one copy, which uses every CPU itself
    std::string package;           ///< the Debian package that provides argv[0]; empty when Debian has none
    std::string whereToGet;        ///< where to get argv[0] when Debian has no package
    std::string directory;         ///< its working directory under the data directory; empty for none
};

/// The presets, the demo first.
const std::vector<WorkloadPreset>& workloadPresets();

/// The preset with this id, or nullptr ("custom" is not a preset: it has no fixed command).
const WorkloadPreset* findPreset(std::string_view id);

/// "demo, boinc, folding or custom", for messages about an id that is none of them.
std::string presetIdList();

/// What to do to get the preset's program, e.g. "install the Debian package boinc-client".
std::string installAdvice(const WorkloadPreset& preset);

/// Why the preset cannot run here, e.g. "the BOINC client (boinc) is not installed: install the Debian
/// package boinc-client".
std::string notInstalledMessage(const WorkloadPreset& preset);

/// Why "custom" cannot be chosen when nicerd was started without a command, and how to give it one.
std::string customUnavailableMessage();

/**
 * The workload that runs @p preset: its program found in @p pathVariable (PATH), its directory under
 * @p dataDir created, and one copy per CPU (@p cpuCount) or a single one. The error says when the program
 * is not installed and what to do.
 */
Result<WorkloadSpec> specForPreset(const WorkloadPreset& preset, int cpuCount,
                                   const std::filesystem::path& dataDir, const std::string& pathVariable);

} // namespace nicer::workload
