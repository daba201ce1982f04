#include "tray/TrayIcon.h"

#include "tray/DaemonProxy.h"
#include "tray/SnoozeMenu.h"
#include "tray/StateIcon.h"

#include <QApplication>
#include <QMenu>
#include <QSystemTrayIcon>
#include <QWidget>

namespace nicer::tray {

TrayIcon::TrayIcon(DaemonProxy& daemon, QWidget& window, QObject* parent)
    : QObject(parent)
    , m_daemon(daemon)
    , m_window(window)
    , m_icon(new QSystemTrayIcon(this))
    , m_menu(new QMenu()) {
    m_open = m_menu->addAction(tr("Open"), this, [this] { toggleWindow(); });
    m_pause = m_menu->addAction(tr("Pause"), this, [this] {
        if (m_daemon.properties().state.paused) {
            m_daemon.resume();
        } else {
            m_daemon.pause();
        }
    });
    m_snooze = new SnoozeMenu(m_daemon, m_menu);
    m_menu->addMenu(m_snooze);
    m_menu->addSeparator();
    m_menu->addAction(tr("Quit"), qApp, &QApplication::quit);
    m_icon->setContextMenu(m_menu);
    connect(m_icon, &QSystemTrayIcon::activated, this, [this](QSystemTrayIcon::ActivationReason reason) {
        if (reason == QSystemTrayIcon::Trigger) {
            toggleWindow();
        }
    });
    connect(&m_daemon, &DaemonProxy::sampleReceived, this, &TrayIcon::update);
    connect(&m_daemon, &DaemonProxy::propertiesChanged, this, &TrayIcon::update);
    connect(&m_daemon, &DaemonProxy::connectedChanged, this, &TrayIcon::update);
    connect(&m_daemon, &DaemonProxy::busChanged, this, &TrayIcon::update);
    update();
}

TrayIcon::~TrayIcon() {
    delete m_menu;
}

void TrayIcon::show() {
    m_icon->show();
}

void TrayIcon::toggleWindow() {
    if (m_window.isVisible() && m_window.isActiveWindow()) {
        m_window.hide();
    } else {
        m_window.show();
        m_window.raise();
        m_window.activateWindow();
    }
}

void TrayIcon::update() {
    const DaemonView view = m_daemon.view();
    const TrayState state = trayStateFor(view, m_daemon.isStarting());
    // Redrawing the icon costs a round trip to the panel; only do it when the state changes.
    if (state != m_state || m_firstUpdate) {
        m_state = state;
        m_firstUpdate = false;
        m_icon->setIcon(stateIcon(state));
    }
    // A rule's hold says what holds the work and why in nicerd's words: "Paused: on battery, 54%".
    QString tip = QStringLiteral("nicer: ") + trayStatusText(state, view);
    if (view.connected && view.sample) {
        const auto& s = *view.sample;
        if (s.outside >= 0.0) {
            tip += tr("\nYour programs %1 %, other users and services %2 %, volunteer work %3 %, idle %4 %")
                       .arg(qRound(100 * api::yourPrograms(s.foreground, s.outside)))
                       .arg(qRound(100 * s.outside))
                       .arg(qRound(100 * s.background))
                       .arg(qRound(100 * s.idle));
        } else {
            tip += tr("\nYour programs %1 %, volunteer work %2 %, idle %3 %")
                       .arg(qRound(100 * s.foreground))
                       .arg(qRound(100 * s.background))
                       .arg(qRound(100 * s.idle));
        }
    } else if (view.busGone) {
        tip += QStringLiteral("\n") + sessionBusGoneText();
    } else if (!view.lastError.isEmpty()) {
        tip += QStringLiteral("\n") + view.lastError;
    }
    if (tip != m_icon->toolTip()) {
        m_icon->setToolTip(tip);
    }
    m_pause->setEnabled(view.connected);
    m_pause->setText(view.paused ? tr("Resume") : tr("Pause"));
    // Also while paused: a snooze then sets when the pause ends.
    m_snooze->menuAction()->setEnabled(view.connected);
}

} // namespace nicer::tray
