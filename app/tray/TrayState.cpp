#include "tray/TrayState.h"

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
    // The controller widens the band or stops the work only when the user's programs took the idle time.
    const auto& s = *view.sample;
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
    }
    return {};
}

QString sessionBusGoneText() {
    return QCoreApplication::translate("nicer::tray",
                                       "The session bus is gone, so nicer-tray cannot reach nicerd: waiting "
                                       "for the bus to come back.");
}

} // namespace nicer::tray
