#include "tray/TrayState.h"

#include "util/WallClock.h"

#include <QCoreApplication>

namespace nicer::tray {

TrayState trayStateFor(const DaemonView& view, bool starting) {
    if (!view.connected) {
        return starting ? TrayState::Connecting : TrayState::Error;
    }
    if (!view.lastError.isEmpty()) {
        return TrayState::Error;
    }
    if (view.paused || (view.sample && view.sample->paused)) {
        return TrayState::Paused;
    }
    if (!view.sample) {
        return TrayState::Connecting;
    }
    // A rule of the volunteer's holds the work under the controller's quota: that is what holds it now.
    const auto& s = *view.sample;
    if (!s.heldBy.empty()) {
        return s.quota <= 0.0 ? TrayState::RulePaused : TrayState::Held;
    }
    // The controller widens the band or stops the work only when the user's programs took the idle time.
    if (s.quota <= 0.0 || s.overloadCount > 0 || s.multiplier > view.params.minMultiplier) {
        return TrayState::Throttled;
    }
    return TrayState::Running;
}

QString trayStateName(TrayState state, bool outsideSignal) {
    switch (state) {
    case TrayState::Connecting:
        return QCoreApplication::translate("nicer::tray", "Connecting to nicerd");
    case TrayState::Running:
        return QCoreApplication::translate("nicer::tray", "Running on spare CPU");
    case TrayState::Throttled:
        return outsideSignal
                   ? QCoreApplication::translate("nicer::tray", "Holding back for other users and services")
                   : QCoreApplication::translate("nicer::tray", "Holding back for your programs");
    case TrayState::Paused:
        return QCoreApplication::translate("nicer::tray", "Paused");
    case TrayState::Error:
        return QCoreApplication::translate("nicer::tray", "Needs attention");
    case TrayState::Held:
        return QCoreApplication::translate("nicer::tray", "Held back by your rules");
    case TrayState::RulePaused:
        return QCoreApplication::translate("nicer::tray", "Paused by your rules");
    }
    return {};
}

QString trayStatusText(TrayState state, const DaemonView& view, std::chrono::system_clock::time_point now) {
    if ((state == TrayState::Held || state == TrayState::RulePaused) && !view.holdReason.isEmpty()) {
        // nicerd's words ("paused: on battery, 54%") as a line of their own.
        return view.holdReason.left(1).toUpper() + view.holdReason.mid(1);
    }
    if (state == TrayState::Paused && view.paused && view.pausedUntilUSec != 0) {
        const wallclock::TimePoint end(std::chrono::microseconds(view.pausedUntilUSec));
        return QCoreApplication::translate("nicer::tray", "Paused %1")
            .arg(QString::fromStdString(wallclock::untilText(end, now)));
    }
    return trayStateName(state, view.sample && view.sample->outsideSignal);
}

QString sessionBusGoneText() {
    return QCoreApplication::translate("nicer::tray",
                                       "The session bus is gone, so nicer-tray cannot reach nicerd: waiting "
                                       "for the bus to come back.");
}

} // namespace nicer::tray
