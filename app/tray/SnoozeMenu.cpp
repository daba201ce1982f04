#include "tray/SnoozeMenu.h"

#include "tray/DaemonProxy.h"
#include "util/WallClock.h"

#include <chrono>

namespace nicer::tray {

SnoozeMenu::SnoozeMenu(DaemonProxy& daemon, QWidget* parent)
    : QMenu(tr("Snooze"), parent) {
    m_hour = addAction(tr("For 1 hour"), this,
                       [&daemon] { daemon.pause(std::chrono::system_clock::now() + std::chrono::hours(1)); });
    m_today = addAction(tr("For the rest of today"), this, [&daemon] {
        // "tomorrow" is the start of tomorrow, in the local time (util/WallClock.h); it cannot fail.
        if (auto end = wallclock::parseTime("tomorrow", std::chrono::system_clock::now())) {
            daemon.pause(*end);
        }
    });
}

} // namespace nicer::tray
