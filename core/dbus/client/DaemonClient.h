#pragma once

#include "api/Boinc.h"
#include "api/DownloadEntry.h"
#include "api/Sample.h"
#include "control/ControllerParams.h"
#include "libsystemd/Bus.h"
#include "util/Result.h"
#include "workload/WorkloadPresets.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace nicer::dbus {

/// Everything `nicer status` shows, read from nicerd's properties in one call.
struct DaemonStatus {
    control::ControllerParams params;
    std::string actuator;
    std::string actuatorNote;  ///< why the actuator caps less well than it could; empty before ApiVersion 5
    std::string placement;     ///< "root-slice" or "user-slice" (api/Placement.h); empty before ApiVersion 9
    std::string placementNote; ///< why the work runs there
    /// The work's memory limit as set, in percent of the machine's memory (100: none); unset before
    /// ApiVersion 6.
    std::optional<double> memoryMaxPercent;
    std::uint64_t memoryMaxBytes = 0; ///< the memory limit the kernel enforces; 0: none
    std::vector<std::string> workload;
    bool demo = false;
    std::string preset; ///< the running workload's preset id, or "custom"
    std::uint32_t instances = 0;
    std::uint32_t cpuCount = 0;
    bool paused = false;
    double quota = 0, multiplier = 0, idle = 0, foreground = 0, background = 0;
    /// The part of foreground used outside the user manager (other users and services); -1 when unknown or
    /// before ApiVersion 8.
    double outside = -1;
    /// What the controller answered in the last period ("machine": the whole machine's idle, "outside": only
    /// the demand from outside the user manager) and nicerd's setting (auto, machine, outside); empty before
    /// ApiVersion 8.
    std::string signal, signalSetting;
    std::uint32_t overloadCount = 0;
    std::string lastError;
    std::vector<workload::PresetInfo> presets; ///< what setWorkloadPreset can choose
    std::vector<api::DownloadEntry> downloads; ///< the work units nicerd downloads; empty when none
    double downloadRate = 0;                   ///< bytes per second received now
    api::BandwidthMode bandwidth;              ///< how the downloads use the link
    std::uint32_t apiVersion = 1;              ///< nicerd's ApiVersion (1: before it had one)
    api::BoincStatus boinc;                    ///< its BOINC client; "off" before ApiVersion 3
};

/// A blocking client of nicerd on the session bus, for the CLI and tests.
class DaemonClient {
public:
    /// Connects to the session bus; does not start nicerd.
    static Result<DaemonClient> connect();

    Result<DaemonStatus> status();
    Result<void> pause();
    Result<void> resume();
    /// Replaces all parameters at once; nicerd validates them again and keeps them across restarts.
    Result<void> setParameters(const control::ControllerParams& params);
    /// Replaces the running work by the preset @p id (or "custom"); kept across restarts. The error holds
    /// nicerd's reason, e.g. that the preset's program is not installed.
    Result<void> setWorkloadPreset(const std::string& id);
    Result<std::vector<api::Sample>> history();
    /// Attaches nicerd's BOINC client to a project; waits for BOINC's verdict (up to two minutes).
    Result<void> boincAttach(const std::string& url, const std::string& accountKey);
    Result<void> boincAttachAccountManager(const std::string& url, const std::string& name,
                                           const std::string& password);
    Result<void> boincDetach(const std::string& url);

private:
    explicit DaemonClient(libsystemd::BusPtr bus)
        : m_bus(std::move(bus)) {}
    Result<void> callNoArgs(const char* method);
    /// Calls @p method with string arguments and no reply value; @p timeoutUsec 0 is sd-bus's default.
    Result<void> callWithStrings(const char* method, std::initializer_list<std::string> args,
                                 std::uint64_t timeoutUsec = 0);

    libsystemd::BusPtr m_bus;
};

} // namespace nicer::dbus
