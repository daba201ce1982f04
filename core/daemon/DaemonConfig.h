#pragma once

#include "actuator/SystemdSliceActuator.h"
#include "api/Actuator.h"
#include "api/MemoryLimit.h"
#include "api/Placement.h"
#include "control/Controller.h"
#include "control/ControllerParams.h"
#include "daemon/DownloadSettings.h"
#include "util/Result.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace nicer::daemon {

/// The smallest memory limit taken: below it hardly any volunteer task fits, and the work would be
/// OOM-killed over and over.
inline constexpr double kMinMemoryMaxPercent = 10.0;

/// The memory-max option's value ("50", "62.5", "100" or "none") as a percentage (100: no limit); the error
/// names the value and the range taken. The command line and the config file share it.
Result<double> parseMemoryMaxPercent(std::string_view text);

/// Everything nicerd needs to start, already parsed and validated by its front end.
struct DaemonConfig {
    control::ControllerParams params;
    /// The workload's command from the command line or nicerd.conf (the "custom" workload); empty when none.
    std::vector<std::string> command;
    /// --workload-preset: a preset's id or "custom"; empty when not given (checked by checkExplicitWorkload).
    std::string workloadPreset;
    /// Copies of the custom command and of the presets that run one per CPU.
    int instances = 1;
    /// Where the workload chosen at run time is kept; read at start-up when no workload is given explicitly.
    std::filesystem::path workloadFile;
    /// Where presets keep their files, one directory each.
    std::filesystem::path dataDir;
    /// The PATH in which the workload's programs are found.
    std::string pathVariable = "/usr/bin:/bin";
    /// Where the work runs (--placement): the root slice (or fail, saying why), the user slice, or nullopt
    /// for auto: the root idle slice where the .deb's system part is installed and this user may start their
    /// instance of it, else the user manager's slice.
    std::optional<api::Placement> placement;
    /// What caps the work (--actuator), or nullopt for auto: the slice's quota where it is supported, else a
    /// duty cycle.
    std::optional<api::Actuator> actuator;
    std::string slice = "nicer.slice";
    /// What the controller answers (--signal): the whole machine's idle, only the demand from outside the
    /// user manager, or auto (outside where the work's slice has cpu.idle 1).
    control::Signal signal = control::Signal::Auto;
    /// The work's memory limit, in percent of the machine's memory (--memory-max; 100: none).
    double memoryMaxPercent = api::kDefaultMemoryMaxPercent;
    /// Where the machine's memory size is read (MemTotal); sysconf's count when it cannot be.
    std::string procMeminfo = "/proc/meminfo";
    /// The idle weight and the CPU bandwidth period of the slice (the systemd-slice actuator).
    actuator::SliceOptions sliceOptions;
    std::string procStat = "/proc/stat";
    /// The kernel's sched_ext folder (kernel::kSchedExtDir), read when the slice's quota shows not to be
    /// enforced.
    std::filesystem::path schedExtDir = "/sys/kernel/sched_ext";
    /// Where parameters set at run time are kept; read at start-up over the config file's
    /// (applySavedSettings, daemon/SettingPrecedence.h).
    std::filesystem::path parameterFile;
    /// The parameters given on the command line itself (their keys), which hold over parameterFile's for this
    /// run only; and what holds beneath them (parameterFile's, else the config file's), which is what a
    /// change at run time keeps of them (parametersToKeep).
    std::vector<std::string> commandLineParameters;
    control::ControllerParams keptParams;
    /// Present while the volunteer's pause lasts, so that the pause holds across a restart of nicerd (an
    /// upgrade of the package, a reboot); read at start-up.
    std::filesystem::path pauseFile;
    /// Running processes of this user to bring under control too.
    std::vector<pid_t> adopt;
    /// How much history GetHistory returns.
    std::chrono::seconds historySpan{600};
    /// Work units to download for the workload; none when downloads.files is empty.
    DownloadSettings downloads;

    // Where the volunteer's rules read the machine (daemon/RuleSources.h); each can be pointed elsewhere
    // for tests. The system bus (UPower) is the one DBUS_SYSTEM_BUS_ADDRESS names, else the system's.
    std::filesystem::path hwmonDir = "/sys/class/hwmon";
    std::filesystem::path thermalDir = "/sys/class/thermal";
    /// A temperature sensor named by the volunteer (an hwmon temp*_input, a thermal zone); empty: the CPU's.
    std::filesystem::path temperatureSensor;
    std::filesystem::path powerSupplyDir = "/sys/class/power_supply";
    /// Where the named programs are looked for.
    std::filesystem::path procDir = "/proc";
    /// The shared-memory object the volunteer's last input is published in for BOINC (publish-input-time).
    std::string inputTimeObject = "/idle_detect_shmem";
    /// The named programs ("exclusive applications") that pause the work while they run.
    std::vector<std::string> exclusivePrograms;
    /// Where the named programs set at run time are kept; read at start-up (applySavedSettings).
    std::filesystem::path programListFile;
};

/// $XDG_STATE_HOME/nicer/parameters.conf (default ~/.local/state/nicer/parameters.conf).
std::filesystem::path defaultParameterFile();
/// $XDG_STATE_HOME/nicer/workload.conf (default ~/.local/state/nicer/workload.conf).
std::filesystem::path defaultWorkloadFile();
/// $XDG_STATE_HOME/nicer/exclusive-programs.conf (default ~/.local/state/nicer/exclusive-programs.conf).
std::filesystem::path defaultProgramListFile();
/// $XDG_STATE_HOME/nicer/paused (default ~/.local/state/nicer/paused).
std::filesystem::path defaultPauseFile();
/// $XDG_DATA_HOME/nicer (default ~/.local/share/nicer).
std::filesystem::path defaultDataDir();
/// Where downloads go unless told: the directory of the workload preset @p preset under @p dataDir when it
/// has one (boinc, folding), else @p dataDir/downloads.
std::filesystem::path defaultDownloadDir(const std::filesystem::path& dataDir, std::string_view preset);
/// $XDG_CONFIG_HOME/nicer/nicerd.conf (default ~/.config/nicer/nicerd.conf).
std::filesystem::path defaultConfigFile();

} // namespace nicer::daemon
