#include "workload/WorkloadChooser.h"

#include <utility>

namespace nicer::workload {

namespace {

std::string joined(const std::vector<std::string>& argv) {
    std::string text;
    for (const auto& arg : argv) {
        text += (text.empty() ? "" : " ") + arg;
    }
    return text;
}

} // namespace

WorkloadChooser::WorkloadChooser(std::vector<std::string> command, int instances,
                                 std::filesystem::path dataDir, std::string pathVariable)
    : m_command(std::move(command))
    , m_instances(instances)
    , m_dataDir(std::move(dataDir))
    , m_pathVariable(std::move(pathVariable)) {}

std::vector<api::PresetInfo> WorkloadChooser::choices() const {
    std::vector<api::PresetInfo> choices;
    for (const auto& preset : workloadPresets()) {
        choices.push_back({preset.id, preset.name, preset.description,
                           resolveExecutable(preset.argv.front(), m_pathVariable).ok()});
    }
    const bool hasCommand = !m_command.empty();
    choices.push_back({std::string(kCustomPreset), "Custom command",
                       hasCommand ? "The command given to nicerd: " + joined(m_command)
                                  : "A command of your own, given to nicerd at start; none was given.",
                       hasCommand && resolveExecutable(m_command.front(), m_pathVariable).ok()});
    return choices;
}

bool WorkloadChooser::known(std::string_view id) {
    return id == kCustomPreset || findPreset(id) != nullptr;
}

Result<WorkloadSpec> WorkloadChooser::resolve(const std::string& id) const {
    if (id == kCustomPreset) {
        if (m_command.empty()) {
            return Error{customUnavailableMessage(), ErrorKind::Unavailable};
        }
        if (auto found = resolveExecutable(m_command.front(), m_pathVariable); !found) {
            return found.error();
        }
        return WorkloadSpec{m_command, m_instances, false, std::string(kCustomPreset)};
    }
    const auto* preset = findPreset(id);
    if (!preset) {
        return Error{"unknown workload preset '" + id + "': choose " + presetIdList(),
                     ErrorKind::InvalidInput};
    }
    return specForPreset(*preset, m_instances, m_dataDir, m_pathVariable);
}

Result<void> checkExplicitWorkload(const std::string& explicitPreset, bool hasCommand) {
    if (explicitPreset.empty()) {
        return {};
    }
    if (!WorkloadChooser::known(explicitPreset)) {
        return Error{"workload-preset = '" + explicitPreset + "' is unknown: the workloads are " +
                     presetIdList()};
    }
    if (explicitPreset == kCustomPreset && !hasCommand) {
        return Error{"workload-preset = custom: " + customUnavailableMessage()};
    }
    if (explicitPreset != kCustomPreset && hasCommand) {
        return Error{"both workload-preset = " + explicitPreset +
                     " and a workload command are given (on the command line or in nicerd.conf): keep one"};
    }
    return {};
}

std::string startupPreset(const std::string& explicitPreset, bool hasCommand,
                          const std::optional<std::string>& persisted) {
    if (!explicitPreset.empty()) {
        return explicitPreset;
    }
    if (hasCommand) {
        return std::string(kCustomPreset);
    }
    return persisted.value_or("demo");
}

} // namespace nicer::workload
