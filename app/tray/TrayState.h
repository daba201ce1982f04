#pragma once

#include "api/Sample.h"
#include "control/ControllerParams.h"

#include <QString>

#include <chrono>
#include <cstdint>
#include <optional>

namespace nicer::tray {

/// What the tray icon shows at a glance.
enum class TrayState {
    Connecting, ///< looking for nicerd or starting it
    Running,    ///< the work gets the spare CPU
    Throttled,  ///< the controller holds the work back because the user needs the CPU
    Paused,     ///< the user paused the work
    Error,      ///< nicerd is unreachable or reports an error
    Held, ///< one of the volunteer's rules (temperature, fans, battery) caps the work under the controller
    RulePaused, ///< one of the volunteer's rules (battery, power saver, a game, a program) paused the work
};

/// The daemon's state as the tray needs it: properties plus the latest sample.
struct DaemonView {
    bool connected = false;
    bool busGone = false; ///< no session bus: nicerd cannot be reached, whether it runs or not
    bool paused = false;
    std::uint64_t pausedUntilUSec = 0; ///< nicerd's PausedUntil: when a snooze ends; 0: none
    QString lastError;
    /// nicerd's HoldReason: the rule that holds the work and why, in plain words ("paused: on battery, 54%");
    /// empty when none does.
    QString holdReason;
    control::ControllerParams params;
    std::optional<api::Sample> sample;
};

/// Pure: the icon's state for what the daemon reports.
TrayState trayStateFor(const DaemonView& view, bool starting);

/// A short, translated name of the state, e.g. for the tooltip. @p outsideSignal: the controller answered
/// only other users and services (api::Sample::outsideSignal), so that is what the work is held back for.
QString trayStateName(TrayState state, bool outsideSignal = false);

/// The state in a line, for the window's status and the tooltip: @p view's hold reason while a rule holds
/// the work ("Held to 40%: CPU 82 °C, target 80 °C", "Paused: a game is running"), when a snooze ends
/// ("Paused until 18:00 (52 min left)", from @p now), else trayStateName().
QString trayStatusText(TrayState state, const DaemonView& view,
                       std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

/// What the tray says while the session bus is gone (DaemonView::busGone), translated.
QString sessionBusGoneText();

} // namespace nicer::tray
