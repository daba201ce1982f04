#pragma once

#include "api/DaemonState.h"
#include "api/Sample.h"
#include "control/ControllerParams.h"
#include "tray/BoincModel.h"
#include "tray/BusTypes.h"
#include "tray/TrayState.h"

#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusPendingCall>
#include <QObject>
#include <QStringList>

#include <chrono>
#include <optional>
#include <vector>

class Daemon1Interface;
class QDBusPendingCallWatcher;
class QDBusServiceWatcher;
class QTimer;

namespace nicer::tray {

class SessionBus;

/// nicerd's properties as the tray knows them: read whole (GetAll) when nicerd appears, then updated from its
/// PropertiesChanged signal.
struct DaemonProperties {
    /// Every property of org.nicer.Daemon1, in the one value nicerd itself serves. The per-period values
    /// (Quota, Idle, ...) are as of the last GetAll: the samples bring them (DaemonProxy::lastSample()).
    api::DaemonState state;
    /// The D-Bus names of the parameters nicerd published: SetParameters sends only these.
    QStringList publishedParameters;
};

/// Whether starting nicerd failed because it is not installed here: D-Bus activation found no service file
/// (@p activationErrorName is ServiceUnknown) and the user manager has no nicerd.service, or cannot be
/// reached at all (as inside a flatpak). The names are D-Bus error names, @p unitErrorMessage the text.
bool isDaemonNotInstalled(const QString& activationErrorName, const QString& unitErrorName,
                          const QString& unitErrorMessage);

/**
 * nicerd as the GUI sees it: an asynchronous client of org.nicer.Daemon1 on the session bus, over the proxy
 * generated from resources/org.nicer.Daemon1.xml (Daemon1Interface).
 *
 * It never blocks the GUI: every call is asynchronous and every failure becomes errorOccurred() in plain
 * words. It reads nicerd's properties once (GetAll) when nicerd appears and then only listens: samples come
 * by the Sample signal, every other change by PropertiesChanged. It follows the bus name, so it reconnects by
 * itself when nicerd restarts (history and properties are fetched again), and it can start nicerd: D-Bus
 * activation first, then the systemd user unit. Given a SessionBus, it also survives the bus itself: while
 * the bus is gone it says so (busChanged()), and on the new bus it makes its proxies and matches again and
 * follows nicerd there as at start.
 */
class DaemonProxy : public QObject {
    Q_OBJECT

public:
    /// On @p bus for good: once it closes, nicerd is unreachable.
    explicit DaemonProxy(const QDBusConnection& bus, QObject* parent = nullptr);
    /// On @p bus's connection now and on each new one after the bus came back.
    explicit DaemonProxy(SessionBus& bus, QObject* parent = nullptr);

    /// Begins following nicerd; when @p launch is set and nicerd is not running, starts it.
    void start(bool launch);
    /// Starts nicerd: D-Bus activation, else `nicerd.service` of the systemd user manager.
    void launchDaemon();

    bool isConnected() const { return m_connected; }
    /// Whether the session bus is there; without it nicerd cannot be reached, running or not.
    bool hasBus() const { return m_bus.isConnected(); }
    bool isStarting() const { return m_starting; }
    const DaemonProperties& properties() const { return m_properties; }
    const std::optional<api::Sample>& lastSample() const { return m_lastSample; }
    /// The state of the tray icon, from all of the above.
    DaemonView view() const;

    /// Pauses the work until resume(), or until @p end (a snooze), whichever comes first.
    void pause(std::optional<std::chrono::system_clock::time_point> end = std::nullopt);
    void resume();
    /// Sends all parameters at once; nicerd validates them again and keeps them across restarts.
    void setParameters(const control::ControllerParams& params);
    /// Switches the volunteer work to another preset ("demo", "boinc", ...); nicerd keeps the choice.
    void setWorkloadPreset(const QString& id);
    /// Replaces the named programs that pause the work (empty: none); nicerd keeps the list. nicerd announces
    /// the new list; a refusal (a name that cannot be a program's) comes as errorOccurred, in nicerd's words.
    void setExclusivePrograms(const QStringList& names);
    /// Reads all of nicerd's properties again (GetAll), as is done by itself whenever nicerd appears.
    void refreshProperties();
    /// Sends @p request to nicerd (BoincAttach, BoincAttachAccountManager or BoincDetach). nicerd answers
    /// when BOINC has (api::kBoincOperationLimit at most): the caller watches the returned call (its error is
    /// nicerd's message). The outcome shows in the BOINC lists, which nicerd announces.
    QDBusPendingCall boincRequest(const BoincRequest& request);

signals:
    void connectedChanged(bool connected);
    /// The session bus went away (@p present false; connectedChanged(false) came just before) or came back
    /// (nicerd's state on it follows).
    void busChanged(bool present);
    /// Properties other than the downloads and BOINC changed; always after reading them whole.
    void propertiesChanged();
    /// The downloads, their rate or the bandwidth mode changed (properties().state.downloads, ...).
    void downloadsChanged();
    /// The BOINC client's state or lists changed (properties().state.boinc).
    void boincChanged();
    /// The whole history, oldest first, after (re)connecting.
    void historyReceived(const std::vector<nicer::api::Sample>& samples);
    void sampleReceived(const nicer::api::Sample& sample);
    void parametersApplied();
    /// Something failed; @p message says what and what to do.
    void errorOccurred(const QString& context, const QString& message);

private slots:
    /// The Sample signal.
    void onSample(const QDBusMessage& message);
    void onPropertiesChanged(const QDBusMessage& message);

private:
    /// Makes the proxies, the name watcher and the signal matches on m_bus.
    void attach();
    void detach();
    void onBusLost();
    void onBusBack(const QDBusConnection& bus);
    void onOwnerChanged(const QString& newOwner);
    void setConnected(bool connected);
    void fetchHistory();
    /// The one path of every property into properties(): @p map is GetAll's answer (@p whole) or
    /// PropertiesChanged's changed values. Emits the signals of what it changed.
    void readProperties(const QVariantMap& map, bool whole);
    /// Emits the signals for what differs between @p before and properties().state.
    void announceChanges(const api::DaemonState& before, bool whole);
    void callSimple(const QDBusPendingCall& call, const QString& context);
    void startUnitFallback(const QDBusMessage& activationError);
    void watchReply(const QDBusMessage& call, std::function<void(const QDBusMessage&)> onReply,
                    std::function<void(const QDBusMessage&)> onError);
    void watchReply(const QDBusPendingCall& pending, std::function<void(const QDBusMessage&)> onReply,
                    std::function<void(const QDBusMessage&)> onError);

    QDBusConnection m_bus;
    bool m_followsBus = false; ///< made with a SessionBus
    /// Counts the connections: an answer that comes back on an older one than m_bus is dropped.
    unsigned m_busGeneration = 0;
    bool m_started = false;           ///< start() was called
    bool m_launchWhenBusBack = false; ///< start(true) found no bus: start nicerd once there is one
    Daemon1Interface* m_daemon = nullptr;
    /// The same interface with a timeout longer than BOINC's answers to attach and detach (QtDBus's
    /// default of 25 s is shorter).
    Daemon1Interface* m_boincCalls = nullptr;
    QDBusServiceWatcher* m_watcher = nullptr;
    QTimer* m_startTimeout = nullptr;
    bool m_connected = false;
    /// nicerd's unique name on the bus while known: its properties are read once per nicerd.
    QString m_owner;
    bool m_starting = false;
    DaemonProperties m_properties;
    std::optional<api::Sample> m_lastSample;
};

} // namespace nicer::tray
