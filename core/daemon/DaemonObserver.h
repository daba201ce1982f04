#pragma once

#include "api/Sample.h"
#include "daemon/DaemonControl.h"
#include "util/Result.h"

#include <systemd/sd-bus.h>

#include <functional>
#include <memory>

namespace nicer::daemon {

/// What the daemon tells the outside as it runs; nicerd's D-Bus service (dbus::DaemonService) implements it.
class DaemonObserver {
public:
    virtual ~DaemonObserver() = default;
    /// One period's sample, or the last good one again when this period's failed (Daemon::lastError says
    /// why).
    virtual void onSample(const api::Sample& sample) = 0;
    /// The BOINC client's state, detail, system-service advice or override changed
    /// (DaemonControl::boincStatus).
    virtual void onBoincStateChanged() = 0;
    /// The actuator or its note changed (DaemonControl::actuatorName, actuatorNote): nicerd fell back to a
    /// duty cycle because the kernel did not enforce the slice's quota.
    virtual void onActuatorChanged() = 0;
};

/**
 * Puts the daemon on the session bus @p bus (not owned) and returns the observer it reports to. The daemon
 * calls it at one fixed step of its start-up, before it touches any unit, so that a second nicerd stops there
 * on the taken name. The composition root (nicerd's main) passes dbus::DaemonService::publish.
 */
using PublishDaemon =
    std::function<Result<std::unique_ptr<DaemonObserver>>(sd_bus* bus, DaemonControl& daemon)>;

} // namespace nicer::daemon
