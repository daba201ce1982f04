#pragma once

#include "api/DaemonState.h"
#include "api/Sample.h"
#include "control/ControllerParams.h"
#include "util/Result.h"

#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nicer::daemon {

/// The BOINC client's requests that the bus passes on (BoincSupervisor carries them out; tests can fake
/// them).
class BoincRequests {
public:
    /// Called once with the outcome of a request to the BOINC client.
    using Done = std::function<void(Result<void>)>;

    virtual ~BoincRequests() = default;
    /// Attaches the BOINC client to the project at @p url with the account key @p key; @p done gets BOINC's
    /// verdict (or why no client could be asked). Asynchronous: the client answers after fetching the
    /// project's master page.
    virtual void attach(const std::string& url, const std::string& key, Done done) = 0;
    /// Attaches the BOINC client to the account manager at @p url with the volunteer's name and password.
    virtual void attachAccountManager(const std::string& url, const std::string& name,
                                      const std::string& password, Done done) = 0;
    /// Detaches the BOINC client from the project at @p url (its tasks and files there are dropped).
    virtual void detach(const std::string& url, Done done) = 0;
};

/// When the volunteer's own pause ends: a time on the wall clock (a snooze: `nicer pause --for 1h`), or none,
/// which means until they resume it.
using PauseEnd = std::optional<std::chrono::system_clock::time_point>;

/// What the D-Bus service sees of the daemon: its state as one value, its history, and its commands. The
/// daemon implements it, tests can fake it.
class DaemonControl {
public:
    virtual ~DaemonControl() = default;

    /// Everything the bus shows of the daemon, now (api/DaemonProperties.h: which property is which field).
    virtual api::DaemonState state() const = 0;
    /// The last periods' samples, oldest first (GetHistory).
    virtual const std::deque<api::Sample>& history() const = 0;

    /// All or nothing: validated first, applied and persisted only when every value is valid.
    virtual Result<void> setParams(const control::ControllerParams& params) = 0;
    /// The pause holds until resume() or @p end (a snooze; none: until resume), across restarts of the
    /// daemon too (DaemonConfig::pauseFile). A new pause replaces the one before, and its end.
    virtual Result<void> pause(PauseEnd end = std::nullopt) = 0;
    virtual Result<void> resume() = 0;
    /// Replaces the running work by the preset @p id (or "custom") and keeps the choice across restarts.
    /// Nothing changes when the id is unknown or its program is not installed; the error says which.
    virtual Result<void> setWorkloadPreset(const std::string& id) = 0;
    /// Replaces the named programs that pause the work while they run, and keeps them across restarts
    /// (DaemonConfig::programListFile). Nothing changes when a name cannot be a program's; the error says
    /// which and why.
    virtual Result<void> setExclusivePrograms(const std::vector<std::string>& names) = 0;

    /// Where the bus's BOINC requests go.
    virtual BoincRequests& boinc() = 0;
};

} // namespace nicer::daemon
