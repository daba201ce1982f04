#pragma once

#include "api/DaemonState.h"
#include "api/Sample.h"
#include "control/ControllerParams.h"
#include "libsystemd/Bus.h"
#include "util/Result.h"

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace nicer::dbus {

/// A blocking client of nicerd on the session bus, for the CLI and tests.
class DaemonClient {
public:
    /// Connects to the session bus; does not start nicerd.
    static Result<DaemonClient> connect();

    /// nicerd's whole state, from its properties in one call (GetAll); a property this client does not know,
    /// or of another type than it expects (another version of nicerd), is left out.
    Result<api::DaemonState> status();
    /// Pauses the work until resume(), or until @p end (a snooze), whichever comes first.
    Result<void> pause(std::optional<std::chrono::system_clock::time_point> end = std::nullopt);
    Result<void> resume();
    /// Replaces all parameters at once; nicerd validates them again and keeps them across restarts.
    Result<void> setParameters(const control::ControllerParams& params);
    /// Replaces the running work by the preset @p id (or "custom"); kept across restarts. The error holds
    /// nicerd's reason, e.g. that the preset's program is not installed.
    Result<void> setWorkloadPreset(const std::string& id);
    /// Replaces the named programs that pause the work while they run; kept across restarts. The error holds
    /// nicerd's reason, e.g. a name that is a path.
    Result<void> setExclusivePrograms(const std::vector<std::string>& names);
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
