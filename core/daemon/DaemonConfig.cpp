#include "daemon/DaemonConfig.h"

#include "util/Text.h"
#include "workload/WorkloadPresets.h"

#include <cstdlib>
#include <pwd.h>
#include <unistd.h>

namespace nicer::daemon {

namespace {

std::filesystem::path xdgDir(const char* variable, const char* fallbackUnderHome) {
    if (const char* dir = std::getenv(variable); dir && *dir == '/') {
        return dir;
    }
    const char* home = std::getenv("HOME");
    if (!home || !*home) {
        const passwd* pw = ::getpwuid(::getuid());
        home = pw ? pw->pw_dir : "/";
    }
    return std::filesystem::path(home) / fallbackUnderHome;
}

} // namespace

Result<double> parseMemoryMaxPercent(std::string_view text) {
    if (text == "none") {
        return 100.0;
    }
    double percent = 0.0;
    const auto number = text.ends_with('%') ? text.substr(0, text.size() - 1) : text;
    if (!text::parseNumber(number, percent) || !(percent >= kMinMemoryMaxPercent && percent <= 100.0)) {
        return Error{
            "memory-max must be 'none' or a percentage of the machine's memory from 10 to 100 (100: no "
            "limit); got '" +
            std::string(text) + "'"};
    }
    return percent;
}

std::filesystem::path defaultParameterFile() {
    return xdgDir("XDG_STATE_HOME", ".local/state") / "nicer" / "parameters.conf";
}

std::filesystem::path defaultWorkloadFile() {
    return xdgDir("XDG_STATE_HOME", ".local/state") / "nicer" / "workload.conf";
}

std::filesystem::path defaultProgramListFile() {
    return xdgDir("XDG_STATE_HOME", ".local/state") / "nicer" / "exclusive-programs.conf";
}

std::filesystem::path defaultPauseFile() {
    return xdgDir("XDG_STATE_HOME", ".local/state") / "nicer" / "paused";
}

std::filesystem::path defaultDataDir() {
    return xdgDir("XDG_DATA_HOME", ".local/share") / "nicer";
}

std::filesystem::path defaultDownloadDir(const std::filesystem::path& dataDir, std::string_view preset) {
    if (const auto* found = workload::findPreset(preset); found && !found->directory.empty()) {
        return dataDir / found->directory;
    }
    return dataDir / "downloads";
}

std::filesystem::path defaultConfigFile() {
    return xdgDir("XDG_CONFIG_HOME", ".config") / "nicer" / "nicerd.conf";
}

} // namespace nicer::daemon
