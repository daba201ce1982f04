#pragma once

#include "api/Boinc.h"
#include "api/DownloadEntry.h"
#include "api/Placement.h"
#include "api/Sample.h"
#include "control/Controller.h"
#include "util/Result.h"
#include "workload/WorkloadPresets.h"
#include "workload/WorkloadSpec.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nicer::daemon {

/// What the D-Bus service exposes of the daemon; the daemon implements it, tests can fake it.
class DaemonControl {
public:
    virtual ~DaemonControl() = default;

    virtual const control::ControllerParams& params() const = 0;
    /// All or nothing: validated first, applied and persisted only when every value is valid.
    virtual Result<void> setParams(const control::ControllerParams& params) = 0;
    /// The pause holds until resume(), across restarts of the daemon too (DaemonConfig::pauseFile).
    virtual Result<void> pause() = 0;
    virtual Result<void> resume() = 0;
    virtual bool paused() const = 0;
    /// What the controller is set to answer (nicerd's --signal); each Sample says what it answered.
    virtual control::Signal signalSetting() const = 0;

    virtual std::string actuatorName() const = 0;
    /// Why the actuator caps the work less well than it could, and what to do; empty when all is well.
    virtual std::string actuatorNote() const = 0;
    /// Where the work runs, and so whom the kernel makes it yield to at once (api/Placement.h).
    virtual api::Placement placement() const = 0;
    /// Why it runs there and, in the user slice, what would protect everything; empty when nothing to say.
    virtual std::string placementNote() const = 0;
    /// The work's memory limit as set (--memory-max), in percent of the machine's memory; 100: none.
    virtual double memoryMaxPercent() const = 0;
    /// The memory limit (MemoryMax) the kernel enforces on the work, in bytes; 0 when none is (none set, or
    /// refused or not enforceable: actuatorNote() says why).
    virtual std::uint64_t memoryMaxBytes() const = 0;
    virtual const workload::WorkloadSpec& workload() const = 0;
    /// The workloads that can be chosen (the presets, then "custom"), with whether each can run now.
    virtual std::vector<workload::PresetInfo> presets() const = 0;
    /// Replaces the running work by the preset @p id (or "custom") and keeps the choice across restarts.
    /// Nothing changes when the id is unknown or its program is not installed; the error says which.
    virtual Result<void> setWorkloadPreset(const std::string& id) = 0;
    virtual int cpuCount() const = 0;
    virtual const control::ControllerState& controllerState() const = 0;
    virtual const std::optional<api::Sample>& lastSample() const = 0;
    virtual const std::deque<api::Sample>& history() const = 0;
    /// The last error of the loop in plain words, empty when all is well.
    virtual const std::string& lastError() const = 0;

    /// The work units nicerd downloads, in manifest order; empty when it was given no manifest.
    virtual std::vector<api::DownloadEntry> downloads() const = 0;
    /// Body bytes per second the downloads receive now.
    virtual double downloadRate() const = 0;
    /// How the downloads use the link: none, nice (perhaps capped), capped or full.
    virtual api::BandwidthMode bandwidthMode() const = 0;

    /// How nicerd's BOINC client stands: its projects, tasks, transfers and notices ("off" without one).
    virtual api::BoincStatus boincStatus() const = 0;
    /// Called once with the outcome of a request to the BOINC client.
    using BoincDone = std::function<void(Result<void>)>;
    /// Attaches the BOINC client to the project at @p url with the account key @p key; @p done gets BOINC's
    /// verdict (or why no client could be asked). Asynchronous: the client answers after fetching the
    /// project's master page.
    virtual void boincAttach(const std::string& url, const std::string& key, BoincDone done) = 0;
    /// Attaches the BOINC client to the account manager at @p url with the volunteer's name and password.
    virtual void boincAttachAccountManager(const std::string& url, const std::string& name,
                                           const std::string& password, BoincDone done) = 0;
    /// Detaches the BOINC client from the project at @p url (its tasks and files there are dropped).
    virtual void boincDetach(const std::string& url, BoincDone done) = 0;
};

} // namespace nicer::daemon
