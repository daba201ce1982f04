#pragma once

#include <QMenu>

namespace nicer::tray {

class DaemonProxy;

/// The snooze's choices: pause the work for an hour, or for the rest of today (until tomorrow starts, in the
/// local time); nicerd resumes it then, and keeps the snooze across its restarts. The tray icon's menu has it
/// as "Snooze", the window as the pause button's menu.
class SnoozeMenu : public QMenu {
    Q_OBJECT

public:
    explicit SnoozeMenu(DaemonProxy& daemon, QWidget* parent = nullptr);

    QAction* forAnHour() const { return m_hour; }
    QAction* restOfToday() const { return m_today; }

private:
    QAction* m_hour = nullptr;
    QAction* m_today = nullptr;
};

} // namespace nicer::tray
