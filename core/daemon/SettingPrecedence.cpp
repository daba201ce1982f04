#include "daemon/SettingPrecedence.h"

#include "control/ParameterTable.h"
#include "control/ParameterText.h"
#include "desktop/ProgramList.h"
#include "util/TextFile.h"
#include "workload/PresetFile.h"
#include "workload/WorkloadChooser.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

namespace nicer::daemon {

namespace {

bool contains(const std::vector<std::string>& keys, std::string_view key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
}

/// The text of @p path, nothing when there is no such file.
Result<std::optional<std::string>> readIfPresent(const std::filesystem::path& path) {
    if (std::error_code ec; path.empty() || !std::filesystem::exists(path, ec)) {
        return std::optional<std::string>{};
    }
    auto text = readTextFile(path);
    if (!text) {
        return text.error();
    }
    return std::optional<std::string>(std::move(*text));
}

/// "NAME NAME" or "none", for a log line.
std::string listText(const std::vector<std::string>& names) {
    return names.empty() ? "none" : desktop::joinedNames(names);
}

/// The part of applySavedSettings for the named programs.
Result<void> applySavedProgramList(DaemonConfig& config, bool fromCommandLine,
                                   std::vector<std::string>& notes) {
    const auto source = config.programListFile.string();
    auto text = readIfPresent(config.programListFile);
    if (!text && !fromCommandLine) {
        return text.error();
    }
    std::optional<std::vector<std::string>> saved;
    if (text && *text) {
        auto names = desktop::readProgramListFile(**text, source);
        if (!names && !fromCommandLine) {
            return Error{names.error().message +
                         " (fix or delete the file; it holds the named programs set at run time)"};
        }
        if (names) {
            saved = std::move(*names);
        }
    }
    auto chosen = chooseProgramList(config.exclusivePrograms, fromCommandLine, saved, source);
    config.exclusivePrograms = std::move(chosen.names);
    notes.insert(notes.end(), chosen.notes.begin(), chosen.notes.end());
    return {};
}

} // namespace

ParameterChoice chooseParameters(const control::ControllerParams& given,
                                 const std::vector<std::string>& commandLine,
                                 const control::ControllerParams& saved, const std::string& source) {
    const control::ControllerParams defaults;
    ParameterChoice choice{saved, {}};
    for (const auto& info : control::parameterTable()) {
        const auto givenText = control::parameterAsText(info, given);
        const auto savedText = control::parameterAsText(info, saved);
        if (contains(commandLine, info.key)) {
            control::copyValue(info, given, choice.params);
            if (givenText != savedText) {
                std::string note(info.key);
                note.append(" = ").append(givenText).append(
                    " from the command line holds for this run over ");
                note.append(savedText).append(", set at run time and kept in ").append(source);
                choice.notes.push_back(std::move(note));
            }
        } else if (givenText != savedText && givenText != control::parameterAsText(info, defaults)) {
            // Given, but not on the command line: nicerd.conf's. (A value that nicerd.conf sets to the
            // default is not told apart from none, and needs no line: the saved one holds either way.)
            std::string note(info.key);
            note.append(" = ").append(savedText).append(", set at run time and kept in ").append(source);
            note.append(", holds over nicerd.conf's ").append(givenText).append(" (`nicer set` changes it)");
            choice.notes.push_back(std::move(note));
        }
    }
    return choice;
}

control::ControllerParams parametersToKeep(const control::ControllerParams& requested,
                                           const control::ControllerParams& running,
                                           const control::ControllerParams& kept,
                                           const std::vector<std::string>& commandLine) {
    control::ControllerParams toKeep = requested;
    for (const auto& info : control::parameterTable()) {
        if (contains(commandLine, info.key) &&
            control::parameterAsText(info, requested) == control::parameterAsText(info, running)) {
            control::copyValue(info, kept, toKeep);
        }
    }
    return toKeep;
}

WorkloadChoice chooseWorkload(const std::string& givenPreset, bool hasCommand, bool fromCommandLine,
                              const std::optional<std::string>& saved, const std::string& source) {
    const auto given = workload::startupPreset(givenPreset, hasCommand, std::nullopt);
    if (fromCommandLine) {
        WorkloadChoice choice{givenPreset, false, {}};
        if (saved && *saved != given) {
            choice.notes.push_back("the workload from the command line, " + given +
                                   ", holds for this run over " + *saved +
                                   ", chosen at run time and kept in " + source);
        }
        return choice;
    }
    if (!saved) {
        return WorkloadChoice{givenPreset, false, {}};
    }
    WorkloadChoice choice{*saved, true, {}};
    if ((!givenPreset.empty() || hasCommand) && *saved != given) {
        choice.notes.push_back("the workload " + *saved + ", chosen at run time and kept in " + source +
                               ", holds over nicerd.conf's " + given + " (`nicer workload` changes it)");
    }
    return choice;
}

ProgramListChoice chooseProgramList(const std::vector<std::string>& given, bool fromCommandLine,
                                    const std::optional<std::vector<std::string>>& saved,
                                    const std::string& source) {
    if (fromCommandLine || !saved) {
        ProgramListChoice choice{given, {}};
        if (saved && *saved != given) {
            choice.notes.push_back("the named programs from the command line (" + listText(given) +
                                   ") hold for this run over " + listText(*saved) +
                                   ", set at run time and kept in " + source);
        }
        return choice;
    }
    ProgramListChoice choice{*saved, {}};
    if (!given.empty() && *saved != given) {
        choice.notes.push_back("the named programs " + listText(*saved) + ", set at run time and kept in " +
                               source + ", hold over nicerd.conf's (" + listText(given) +
                               "; `nicer exclusive-programs` changes them)");
    }
    return choice;
}

Result<std::vector<std::string>> applySavedSettings(DaemonConfig& config,
                                                    const CommandLineSettings& commandLine) {
    std::vector<std::string> notes;
    config.commandLineParameters = commandLine.parameters;
    config.keptParams = config.params;

    const auto parameterSource = config.parameterFile.string();
    auto parameterText = readIfPresent(config.parameterFile);
    if (!parameterText) {
        return parameterText.error();
    }
    if (*parameterText) {
        // Read over the given values: a parameter newer than the file keeps nicerd.conf's or the default.
        auto saved = control::readSavedParameterFile(**parameterText, parameterSource, config.params);
        if (!saved) {
            return Error{saved.error().message +
                         " (fix or delete the file; it holds parameters set at run time)"};
        }
        auto chosen = chooseParameters(config.params, commandLine.parameters, *saved, parameterSource);
        if (auto valid = control::validate(chosen.params); !valid) {
            return Error{valid.error().message +
                         ": the parameters from the command line do not fit with those " +
                         "set at run time and kept in " + parameterSource +
                         " (give them together on the command line, or change them with `nicer set`)"};
        }
        config.params = chosen.params;
        config.keptParams = *saved;
        notes.insert(notes.end(), chosen.notes.begin(), chosen.notes.end());
    }

    const auto workloadSource = config.workloadFile.string();
    const bool hasCommand = !config.command.empty();
    auto workloadText = readIfPresent(config.workloadFile);
    if (!workloadText && !commandLine.workload) {
        return workloadText.error();
    }
    std::optional<std::string> saved;
    if (workloadText && *workloadText) {
        auto id = workload::readPresetFile(**workloadText, workloadSource);
        if (!id && !commandLine.workload) {
            return Error{id.error().message +
                         " (fix or delete the file; it holds the workload chosen at run time)"};
        }
        if (id) {
            saved = *id;
        }
    }
    const bool givenInConfig = !config.workloadPreset.empty() || hasCommand;
    auto chosen =
        chooseWorkload(config.workloadPreset, hasCommand, commandLine.workload, saved, workloadSource);
    if (chosen.chosenAtRunTime) {
        // Checked here, where it is known to come from the file, so that the error says which file to delete.
        const workload::WorkloadChooser chooser(config.command, config.instances, config.dataDir,
                                                config.pathVariable);
        if (auto spec = chooser.resolve(chosen.preset); !spec) {
            return Error{spec.error().message + " (" + chosen.preset +
                         " was chosen at run time and is kept in " + workloadSource +
                         ": delete that file to start with " +
                         (givenInConfig ? "nicerd.conf's workload" : "the demo") + ")"};
        }
    }
    config.workloadPreset = chosen.preset;
    notes.insert(notes.end(), chosen.notes.begin(), chosen.notes.end());

    if (auto programs = applySavedProgramList(config, commandLine.exclusivePrograms, notes); !programs) {
        return programs.error();
    }
    return notes;
}

} // namespace nicer::daemon
