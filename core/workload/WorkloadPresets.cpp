#include "workload/WorkloadPresets.h"

#include "workload/BoincCommand.h"

#include <system_error>

namespace nicer::workload {

const std::vector<WorkloadPreset>& workloadPresets() {
    static const std::vector<WorkloadPreset> presets{
        {"demo", "Demo workload",
         "md5sum /dev/zero on every CPU, as in the thesis: it only burns spare CPU to show the capping and "
         "does no science.",
         demoWorkload(1).argv, true, "coreutils", "", ""},
        {"boinc",
         "BOINC client",
         "The BOINC client, running the projects you attach it to (nicer boinc attach, the tray, or the "
         "BOINC Manager on its own port); it runs one task per CPU by itself and keeps its data in nicer's "
         "data folder. nicer sets its preferences so that it never throttles or suspends itself.",
         {"boinc", "--dir", std::string(kPresetDirArgument), "--gui_rpc_port",
          std::string(kBoincRpcPortArgument)},
         false,
         "boinc-client",
         "",
         "boinc"},
        {"folding",
         "Folding@home client",
         "The Folding@home v7 client (FAHClient), simulating protein dynamics for disease research; it uses "
         "every CPU by itself. Set it up with FAHControl or its web page.",
         {"FAHClient", "--chdir", std::string(kPresetDirArgument)},
         false,
         "",
         "it is not in Debian: get the v7 client (the fahclient .deb) from "
         "https://foldingathome.org/start-folding/",
         "folding"},
    };
    return presets;
}

const WorkloadPreset* findPreset(std::string_view id) {
    for (const auto& preset : workloadPresets()) {
        if (preset.id == id) {
            return &preset;
        }
    }
    return nullptr;
}

std::string presetIdList() {
    std::string ids;
    for (const auto& preset : workloadPresets()) {
        ids += preset.id + ", ";
    }
    ids.resize(ids.size() - 2);
    return ids + " or " + std::string(kCustomPreset);
}

std::string installAdvice(const WorkloadPreset& preset) {
    return preset.package.empty() ? preset.whereToGet : "install the Debian package " + preset.package;
}

std::string notInstalledMessage(const WorkloadPreset& preset) {
    return "the " + preset.name + " (" + preset.argv.front() + ") is not installed: " + installAdvice(preset);
}

std::string customUnavailableMessage() {
    return "no custom workload was given to nicerd: start it with a command (`nicerd -- COMMAND ARGS...`, "
           "or `workload = [\"COMMAND\", \"ARG\"]` in nicerd.conf)";
}

Result<WorkloadSpec> specForPreset(const WorkloadPreset& preset, int cpuCount,
                                   const std::filesystem::path& dataDir, const std::string& pathVariable) {
    if (!resolveExecutable(preset.argv.front(), pathVariable)) {
        return Error{notInstalledMessage(preset) + ", or choose another workload", ErrorKind::Unavailable};
    }
    WorkloadSpec spec{preset.argv, preset.onePerCpu ? cpuCount : 1, preset.id == "demo", preset.id};
    if (!preset.directory.empty()) {
        const auto dir = dataDir / preset.directory;
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec) {
            return Error{"cannot create " + dir.string() + " for the " + preset.name + ": " + ec.message() +
                         "; check that " + dataDir.string() + " is writable (it follows $XDG_DATA_HOME)"};
        }
        for (auto& arg : spec.argv) {
            if (arg == kPresetDirArgument) {
                arg = dir.string();
            }
        }
    }
    for (auto& arg : spec.argv) {
        if (arg == kBoincRpcPortArgument) {
            arg = std::to_string(chooseBoincRpcPort());
        }
    }
    return spec;
}

} // namespace nicer::workload
