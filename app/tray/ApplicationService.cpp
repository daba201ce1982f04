#include "tray/ApplicationService.h"

#include "tray/SessionBus.h"

#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QWidget>

namespace nicer::tray {

namespace {

// The caller of a second launch waits at most this long for the first to answer: a hung instance must not
// hang the menu entry too.
constexpr int kActivateTimeoutMs = 5000;

// What the launcher gave this process to hand on, so the window may take the focus (startup notification
// on X11, xdg-activation on Wayland).
QVariantMap launcherPlatformData() {
    QVariantMap data;
    if (const QByteArray token = qgetenv("XDG_ACTIVATION_TOKEN"); !token.isEmpty()) {
        data.insert(QStringLiteral("activation-token"), QString::fromUtf8(token));
    }
    if (const QByteArray id = qgetenv("DESKTOP_STARTUP_ID"); !id.isEmpty()) {
        data.insert(QStringLiteral("desktop-startup-id"), QString::fromUtf8(id));
    }
    return data;
}

} // namespace

ApplicationService::ApplicationService(const QDBusConnection& bus, QObject* parent)
    : QObject(parent)
    , m_bus(bus) {}

ApplicationService::ApplicationService(SessionBus& bus, QObject* parent)
    : ApplicationService(bus.connection(), parent) {
    connect(&bus, &SessionBus::reconnected, this, &ApplicationService::onBusBack);
}

void ApplicationService::onBusBack(const QDBusConnection& bus) {
    m_bus = bus; // the name and the object went with the old bus
    if (m_claim == Claim::AlreadyRunning) {
        return; // this process only hands over to the first one and leaves
    }
    if (claim() == Claim::AlreadyRunning) {
        emit nameTaken(
            tr("another nicer-tray took the name %1 while the session bus was gone").arg(kBusName));
    }
}

ApplicationService::Claim ApplicationService::claim() {
    m_claim = claimName();
    return *m_claim;
}

ApplicationService::Claim ApplicationService::claimName() {
    if (!m_bus.isConnected() || m_bus.interface() == nullptr) {
        m_claimError = tr("there is no D-Bus session bus");
        return Claim::NoBus;
    }
    // Export first, so a second launch that sees the name can already call Activate; calls wait in the
    // queue until the event loop runs.
    if (!m_bus.registerObject(kObjectPath, this, QDBusConnection::ExportScriptableSlots)) {
        m_claimError = tr("%1 is already exported on this connection").arg(kObjectPath);
        return Claim::NoBus;
    }
    const auto reply = m_bus.interface()->registerService(
        kBusName, QDBusConnectionInterface::DontQueueService, QDBusConnectionInterface::DontAllowReplacement);
    if (!reply.isValid()) {
        m_bus.unregisterObject(kObjectPath);
        m_claimError = tr("the session bus refused the name %1 (%2)").arg(kBusName, reply.error().message());
        return Claim::NoBus;
    }
    if (reply.value() != QDBusConnectionInterface::ServiceRegistered) {
        m_bus.unregisterObject(kObjectPath);
        return Claim::AlreadyRunning;
    }
    return Claim::Primary;
}

QString ApplicationService::activateRunning() {
    return callRunning(QStringLiteral("Activate"), {launcherPlatformData()});
}

QString ApplicationService::quitRunning() {
    return callRunning(QStringLiteral("ActivateAction"),
                       {QString::fromLatin1(kQuitAction), QVariantList(), launcherPlatformData()});
}

QString ApplicationService::callRunning(const QString& method, const QVariantList& arguments) {
    auto call = QDBusMessage::createMethodCall(kBusName, kObjectPath, kInterface, method);
    call.setArguments(arguments);
    const QDBusMessage reply = m_bus.call(call, QDBus::Block, kActivateTimeoutMs);
    if (reply.type() == QDBusMessage::ErrorMessage) {
        return tr("nicer-tray is already running but did not answer (%1). Quit it from its tray icon, or "
                  "end it with `pkill -x nicer-tray`, and start it again.")
            .arg(reply.errorMessage());
    }
    return {};
}

void ApplicationService::setWindow(QWidget* window) {
    m_window = window;
    if (m_activationPending) {
        bringWindowForward();
    }
}

void ApplicationService::Activate(const QVariantMap& platformData) {
    // Qt's Wayland plugin takes the focus with the token it finds in the environment.
    if (const QString token = platformData.value(QStringLiteral("activation-token")).toString();
        !token.isEmpty()) {
        qputenv("XDG_ACTIVATION_TOKEN", token.toUtf8());
    }
    bringWindowForward();
}

void ApplicationService::Open(const QStringList&, const QVariantMap& platformData) {
    // nicer-tray opens no files; a desktop that sends some still means "show me the program".
    Activate(platformData);
}

void ApplicationService::ActivateAction(const QString& actionName, const QVariantList&,
                                        const QVariantMap& platformData) {
    // The desktop entry's one action, which the package's removal calls in each user's session too.
    if (actionName == QLatin1String(kQuitAction)) {
        emit quitRequested();
        return;
    }
    Activate(platformData);
}

void ApplicationService::bringWindowForward() {
    if (m_window.isNull()) {
        m_activationPending = true;
        return;
    }
    m_activationPending = false;
    m_window->show();
    m_window->setWindowState((m_window->windowState() & ~Qt::WindowMinimized) | Qt::WindowActive);
    m_window->raise();
    m_window->activateWindow();
    emit activated();
}

} // namespace nicer::tray
