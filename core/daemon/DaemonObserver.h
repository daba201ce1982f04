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
    /// One period's sample, or the last good one again when this period's failed (the state's lastError says
    /// why); the observer announces the state's changes with it.
    virtual void onSample(const api::Sample& sample) = 0;
    /// Something of DaemonControl::state() changed between periods (the BOINC client, the actuator after a
    /// fallback): the observer announces what differs.
    virtual void onStateChanged() = 0;
};

/**
 * Puts the daemon on the session bus @p bus (not owned) and returns the observer it reports to. The daemon
 * calls it at one fixed step of its start-up, before it touches any unit, so that a second nicerd stops there
 * on the taken name. The composition root (nicerd's main) passes dbus::DaemonService::publish.
 */
using PublishDaemon =
    std::function<Result<std::unique_ptr<DaemonObserver>>(sd_bus* bus, DaemonControl& daemon)>;

} // namespace nicer::daemon
