#pragma once

#include "util/Result.h"
#include "workload/WorkloadPresets.h"
#include "workload/WorkloadSpec.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nicer::workload {

/**
 * The workloads nicerd can switch between at run time: the presets, and "custom" when nicerd was given a
 * command. It knows where the presets keep their files, how many copies to run and where to find programs,
 * so that an id is all a client has to send.
 */
class WorkloadChooser {
public:
    /// @p command is the custom workload (empty when none was given); @p instances the copies of it and of
    /// the presets that run one per CPU; @p dataDir where presets keep their files; @p pathVariable the PATH
    /// in which programs are found.
    WorkloadChooser(std::vector<std::string> command, int instances, std::filesystem::path dataDir,
                    std::string pathVariable);

    /// Every preset, then "custom", each with whether it can run now.
    std::vector<api::PresetInfo> choices() const;
    /// True for a preset's id and for "custom", whether or not it can run now.
    static bool known(std::string_view id);
    /// The workload for @p id, with its directory created. The error says what is wrong and what to do: an
    /// unknown id (listing the known ones), a program that is not installed, custom without a command.
    Result<WorkloadSpec> resolve(const std::string& id) const;

    const std::string& pathVariable() const { return m_pathVariable; }

private:
    std::vector<std::string> m_command;
    int m_instances;
    std::filesystem::path m_dataDir;
    std::string m_pathVariable;
};

/// Checks nicerd's explicit workload options together: a known --workload-preset, "custom" only with a
/// command, and not a preset and a command at once.
Result<void> checkExplicitWorkload(const std::string& explicitPreset, bool hasCommand);

/// The workload nicerd starts with. An explicit one (--workload-preset or a command, on the command line or
/// in nicerd.conf) wins over @p persisted, the one chosen at run time, which wins over the demo.
std::string startupPreset(const std::string& explicitPreset, bool hasCommand,
                          const std::optional<std::string>& persisted);

} // namespace nicer::workload
