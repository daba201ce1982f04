#pragma once

#include "control/ControllerParams.h"
#include "daemon/Sample.h"
#include "systemd/SdBus.h"
#include "util/Result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nicer::dbus {

/// Everything `nicer status` shows, read from nicerd's properties in one call.
struct DaemonStatus {
    control::ControllerParams params;
    std::string actuator;
    std::vector<std::string> workload;
    bool demo = false;
    std::uint32_t instances = 0;
    std::uint32_t cpuCount = 0;
    bool paused = false;
    double quota = 0, multiplier = 0, idle = 0, foreground = 0, background = 0;
    std::uint32_t overloadCount = 0;
    std::string lastError;
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
    Result<std::vector<daemon::Sample>> history();

private:
    explicit DaemonClient(systemd::BusPtr bus)
        : m_bus(std::move(bus)) {}
    Result<void> callNoArgs(const char* method);

    systemd::BusPtr m_bus;
};

} // namespace nicer::dbus
