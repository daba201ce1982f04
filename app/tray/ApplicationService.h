#pragma once

#include <QDBusConnection>
#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QVariantMap>

#include <optional>

class QWidget;

namespace nicer::tray {

class SessionBus;

/**
 * One nicer-tray per session: the bus name org.nicer.Tray with the freedesktop Application interface at
 * /org/nicer/Tray, which desktops call for a DBusActivatable entry.
 *
 * The first process claims the name and serves Activate (the window comes forward); a later one finds the
 * name taken, calls Activate on its owner and exits, so there is never a second icon. Given a SessionBus,
 * the first claims again on every new bus after the old one went away.
 */
class ApplicationService : public QObject {
    Q_OBJECT
    Q_CLASSINFO("D-Bus Interface", "org.freedesktop.Application")

public:
    static constexpr auto kBusName = "org.nicer.Tray";
    static constexpr auto kObjectPath = "/org/nicer/Tray";
    static constexpr auto kInterface = "org.freedesktop.Application";
    /// The desktop entry's action that quits the tray (nicerd keeps running).
    static constexpr auto kQuitAction = "quit";

    enum class Claim {
        Primary,        ///< this process owns the name and serves the interface
        AlreadyRunning, ///< another nicer-tray owns it: activateRunning(), then exit
        NoBus,          ///< no session bus (or it refused): run alone, single instance not enforced
    };

    explicit ApplicationService(const QDBusConnection& bus, QObject* parent = nullptr);
    /// On @p bus's connection; a process that claimed (or found no bus) claims again on each new one.
    explicit ApplicationService(SessionBus& bus, QObject* parent = nullptr);

    /// Exports the interface, then asks for the name (never queued: either it is ours now or it is not).
    Claim claim();
    /// Why claim() returned NoBus, in plain words.
    QString claimError() const { return m_claimError; }
    /// Asks the owner of the name to bring its window forward; empty on success, else what failed.
    QString activateRunning();
    /// Asks the owner of the name to quit (the desktop entry's "quit" action); empty on success.
    QString quitRunning();

    /// The window that Activate brings forward; an activation that came before it is done now.
    void setWindow(QWidget* window);

public slots:
    // org.freedesktop.Application. The names are the interface's own.
    // NOLINTBEGIN(readability-identifier-naming)
    Q_SCRIPTABLE void Activate(const QVariantMap& platformData);
    Q_SCRIPTABLE void Open(const QStringList& uris, const QVariantMap& platformData);
    Q_SCRIPTABLE void ActivateAction(const QString& actionName, const QVariantList& parameter,
                                     const QVariantMap& platformData);
    // NOLINTEND(readability-identifier-naming)

signals:
    void activated();
    /// ActivateAction("quit"): the desktop's menu, or the package's removal, asks the tray to quit.
    void quitRequested();
    /// The bus came back with another nicer-tray on the name, started while it was gone; @p message says
    /// so. Two would show two icons: this one should hand over and quit.
    void nameTaken(const QString& message);

private:
    Claim claimName();
    QString callRunning(const QString& method, const QVariantList& arguments);
    void bringWindowForward();
    void onBusBack(const QDBusConnection& bus);

    QDBusConnection m_bus;
    std::optional<Claim> m_claim; ///< what the last claim() found
    QPointer<QWidget> m_window;
    bool m_activationPending = false;
    QString m_claimError;
};

} // namespace nicer::tray
