#pragma once

#include "tray/TrayState.h"

#include <QObject>

class QAction;
class QMenu;
class QSystemTrayIcon;
class QWidget;

namespace nicer::tray {

class DaemonProxy;

/// The icon in the panel: its picture shows the state, its tooltip the split and when a snooze ends, its menu
/// Open, Pause/Resume, Snooze (SnoozeMenu) and Quit; a click opens or hides the window.
class TrayIcon : public QObject {
    Q_OBJECT

public:
    TrayIcon(DaemonProxy& daemon, QWidget& window, QObject* parent = nullptr);
    ~TrayIcon() override;

    void show();
    TrayState state() const { return m_state; }
    QSystemTrayIcon* icon() const { return m_icon; }
    QMenu* menu() const { return m_menu; }

private:
    void update();
    void toggleWindow();

    DaemonProxy& m_daemon;
    QWidget& m_window;
    QSystemTrayIcon* m_icon = nullptr;
    QMenu* m_menu = nullptr;
    QAction* m_open = nullptr;
    QAction* m_pause = nullptr;
    QMenu* m_snooze = nullptr; ///< SnoozeMenu
    TrayState m_state = TrayState::Connecting;
    bool m_firstUpdate = true;
};

} // namespace nicer::tray
