#pragma once

#include "api/Sample.h"
#include "control/ControllerParams.h"

#include <QString>

#include <optional>

namespace nicer::tray {

/// What the tray icon shows at a glance.
enum class TrayState {
    Connecting, ///< looking for nicerd or starting it
    Running,    ///< the work gets the spare CPU
    Throttled,  ///< the controller holds the work back because the user needs the CPU
    Paused,     ///< the user paused the work
    Error,      ///< nicerd is unreachable or reports an error
};

/// The daemon's state as the tray needs it: properties plus the latest sample.
struct DaemonView {
    bool connected = false;
    bool busGone = false; ///< no session bus: nicerd cannot be reached, whether it runs or not
    bool paused = false;
    QString lastError;
    control::ControllerParams params;
    std::optional<api::Sample> sample;
};

/// Pure: the icon's state for what the daemon reports.
TrayState trayStateFor(const DaemonView& view, bool starting);

/// A short, translated name of the state, e.g. for the tooltip. @p outsideSignal: the controller answered
/// only other users and services (api::Sample::outsideSignal), so that is what the work is held back for.
QString trayStateName(TrayState state, bool outsideSignal = false);

/// What the tray says while the session bus is gone (DaemonView::busGone), translated.
QString sessionBusGoneText();

} // namespace nicer::tray
