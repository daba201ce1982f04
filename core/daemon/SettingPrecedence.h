#pragma once

// One rule for where nicerd's settings come from, the controller's parameters, the workload and the named
// programs alike:
//
//   the command line  >  what was set at run time (kept in the state directory)  >  nicerd.conf  >  defaults
//
// A flag on the command line holds for that run, even over a value set at run time; a value set at run time
// (`nicer set`, `nicer workload`, `nicer exclusive-programs`, the tray) survives restarts and beats
// nicerd.conf; a later change at run time still applies, and is kept, while nicerd runs.

#include "control/ControllerParams.h"
#include "daemon/DaemonConfig.h"
#include "util/Result.h"

#include <optional>
#include <string>
#include <vector>

namespace nicer::daemon {

/// Which of the settings the rule orders were given on the command line itself, as opposed to nicerd.conf or
/// the defaults (CLI11 merges the two, so nicerd's front end finds this out separately).
struct CommandLineSettings {
    std::vector<std::string> parameters; ///< keys of control::parameterTable() given on the command line
    bool workload = false;               ///< a command after -- or --workload-preset given on it
    bool exclusivePrograms = false;      ///< --exclusive-program given on it
};

/// The parameters nicerd starts with, and a line for its log for each saved value that does not hold or that
/// holds over nicerd.conf's.
struct ParameterChoice {
    control::ControllerParams params;
    std::vector<std::string> notes;
};

/**
 * The rule for the parameters, pure: each parameter in @p commandLine keeps its value from @p given (the
 * command line's over nicerd.conf's over the default); every other one takes @p saved's, the parameters set
 * at run time, read from @p source. Not validated: the two sets may not fit together (validate the result).
 */
ParameterChoice chooseParameters(const control::ControllerParams& given,
                                 const std::vector<std::string>& commandLine,
                                 const control::ControllerParams& saved, const std::string& source);

/**
 * What nicerd keeps in its parameter file when @p requested is set at run time while it runs @p running: the
 * requested values, except for a parameter in @p commandLine that the change leaves as it runs, which keeps
 * its value from @p kept (what was kept before, or nicerd.conf's), so that a flag on the command line still
 * holds for that run only. The result is the next change's @p kept.
 */
control::ControllerParams parametersToKeep(const control::ControllerParams& requested,
                                           const control::ControllerParams& running,
                                           const control::ControllerParams& kept,
                                           const std::vector<std::string>& commandLine);

/// The workload preset nicerd starts with, where it came from, and a line for its log when a saved choice
/// does not hold or holds over nicerd.conf's.
struct WorkloadChoice {
    /// The id to start (DaemonConfig::workloadPreset): unchanged when the run-time choice does not apply.
    std::string preset;
    bool chosenAtRunTime = false; ///< the id is the one kept in the workload file
    std::vector<std::string> notes;
};

/**
 * The rule for the workload, pure: a workload on the command line (@p fromCommandLine) keeps @p givenPreset;
 * else @p saved, the preset chosen at run time (read from @p source), wins over nicerd.conf's workload
 * (@p givenPreset or @p hasCommand, the custom one), which wins over the demo (an empty preset).
 */
WorkloadChoice chooseWorkload(const std::string& givenPreset, bool hasCommand, bool fromCommandLine,
                              const std::optional<std::string>& saved, const std::string& source);

/// The named programs nicerd starts with, and a line for its log when a saved list does not hold or holds
/// over nicerd.conf's.
struct ProgramListChoice {
    std::vector<std::string> names;
    std::vector<std::string> notes;
};

/**
 * The rule for the named programs, pure: the list on the command line (@p fromCommandLine) keeps @p given;
 * else @p saved, the list set at run time (read from @p source, empty included), wins over nicerd.conf's
 * (@p given), which wins over none.
 */
ProgramListChoice chooseProgramList(const std::vector<std::string>& given, bool fromCommandLine,
                                    const std::optional<std::vector<std::string>>& saved,
                                    const std::string& source);

/**
 * Applies the rule to @p config, read from the command line and nicerd.conf: reads the parameters, the
 * workload and the named programs set at run time (config.parameterFile, config.workloadFile,
 * config.programListFile) and puts them where the rule says;
 * sets config.commandLineParameters and config.keptParams for parametersToKeep. Returns the lines for
 * nicerd's log. An error (a file that cannot be read, a saved workload that cannot run, saved parameters that
 * do not fit with the command line's) names the file and what to do; a workload or program list file that
 * the command line overrides is no obstacle.
 */
Result<std::vector<std::string>> applySavedSettings(DaemonConfig& config,
                                                    const CommandLineSettings& commandLine);

} // namespace nicer::daemon
