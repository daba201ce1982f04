#include "tray/DaemonProxy.h"

#include "Daemon1Interface.h"
#include "api/BusNames.h"
#include "api/DaemonProperties.h"
#include "control/ParameterTable.h"
#include "tray/SessionBus.h"

#include <QDBusArgument>
#include <QDBusConnectionInterface>
#include <QDBusMetaType>
#include <QDBusPendingCallWatcher>
#include <QDBusServiceWatcher>
#include <QTimer>

#include <chrono>
#include <cmath>
#include <string_view>
#include <type_traits>
#include <variant>

namespace nicer::tray {

namespace {

constexpr auto kDbusService = "org.freedesktop.DBus";
constexpr auto kSystemdService = "org.freedesktop.systemd1";
constexpr auto kSystemdPath = "/org/freedesktop/systemd1";
constexpr auto kSystemdManager = "org.freedesktop.systemd1.Manager";
constexpr auto kUnitName = "nicerd.service";
// nicerd is Type=notify and takes its name only when ready; give a slow machine time before saying so.
constexpr int kStartTimeoutMs = 20000;
// nicerd answers BoincAttach and the others when BOINC has (api::kBoincOperationLimit at most); past this,
// the call fails on our side with NoReply.
constexpr int kBoincCallTimeoutMs =
    static_cast<int>(std::chrono::milliseconds(api::kBoincCallTimeout).count());

/// The D-Bus signature of a value QtDBus read into @p value: "b", "as", "a(sssb)", ...
QString signatureOf(const QVariant& value) {
    if (value.metaType() == QMetaType::fromType<QDBusArgument>()) {
        return qvariant_cast<QDBusArgument>(value).currentSignature();
    }
    return QString::fromLatin1(QDBusMetaType::typeToSignature(value.metaType()));
}

/// Reads @p value into @p property's field of @p state. False when the value has another signature than the
/// property's: the field keeps its value.
bool readProperty(const api::PropertyInfo& property, const QVariant& value, api::DaemonState& state) {
    if (signatureOf(value) != QString::fromStdString(api::signatureOf(property))) {
        return false;
    }
    return std::visit(
        [&](const auto& field) {
            if constexpr (std::is_same_v<std::decay_t<decltype(field)>, const control::ParameterInfo*>) {
                // The D-Bus value (ReserveBand, ..., PeriodUSec in µs) in the table's unit, hours as their
                // text; a value that cannot be stored (an absurd period) keeps the last.
                if (field->type == control::ParameterType::Hours) {
                    (void)field->setText(state.params, value.toString().toStdString());
                } else {
                    (void)field->set(state.params, value.toDouble() / field->busScale);
                }
            } else {
                readBusValue(value, field(state));
            }
            return true;
        },
        property.field);
}

/// Puts @p property's field of @p state back to its default: a property missing from GetAll's answer.
void resetProperty(const api::PropertyInfo& property, api::DaemonState& state) {
    static const api::DaemonState defaults;
    std::visit(
        [&](const auto& field) {
            if constexpr (std::is_same_v<std::decay_t<decltype(field)>, const control::ParameterInfo*>) {
                control::copyValue(*field, defaults.params, state.params);
            } else {
                field(state) = api::valueOf(field, defaults);
            }
        },
        property.field);
}

/// Which of DaemonProxy's signals announces a change of @p property.
enum class Part { Downloads, Boinc, Others };

Part partOf(const api::PropertyInfo& property) {
    const std::string_view name = property.name;
    if (name.starts_with("Download") || name.starts_with("Bandwidth")) {
        return Part::Downloads; // the downloads panel shows the bandwidth mode with them
    }
    return name.starts_with("Boinc") ? Part::Boinc : Part::Others;
}

} // namespace

bool isDaemonNotInstalled(const QString& activationErrorName, const QString& unitErrorName,
                          const QString& unitErrorMessage) {
    if (activationErrorName != QLatin1String("org.freedesktop.DBus.Error.ServiceUnknown")) {
        return false; // a service file exists: nicerd is installed and failed some other way
    }
    const bool noUnit = unitErrorName == QLatin1String("org.freedesktop.systemd1.NoSuchUnit") ||
                        unitErrorMessage.contains(QLatin1String("not found"));
    // No user manager on the bus (or only its stub service file, which fails to spawn), or one the sandbox
    // hides (flatpak's bus proxy): only activation could have started nicerd, and it has nothing to start.
    const bool noSystemd = unitErrorName == QLatin1String("org.freedesktop.DBus.Error.ServiceUnknown") ||
                           unitErrorName == QLatin1String("org.freedesktop.DBus.Error.NameHasNoOwner") ||
                           unitErrorName == QLatin1String("org.freedesktop.DBus.Error.AccessDenied") ||
                           unitErrorName.startsWith(QLatin1String("org.freedesktop.DBus.Error.Spawn."));
    return noUnit || noSystemd;
}

DaemonProxy::DaemonProxy(const QDBusConnection& bus, QObject* parent)
    : QObject(parent)
    , m_bus(bus)
    , m_startTimeout(new QTimer(this)) {
    registerBusTypes();
    m_startTimeout->setSingleShot(true);
    m_startTimeout->setInterval(kStartTimeoutMs);
    connect(m_startTimeout, &QTimer::timeout, this, [this] {
        if (m_starting && !m_connected) {
            m_starting = false;
            emit errorOccurred(tr("Starting nicerd"),
                               tr("nicerd was started but did not come up. See `systemctl --user status "
                                  "nicerd` or run `nicerd` in a terminal to read why."));
            emit connectedChanged(false);
        }
    });
    attach();
}

DaemonProxy::DaemonProxy(SessionBus& bus, QObject* parent)
    : DaemonProxy(bus.connection(), parent) {
    m_followsBus = true;
    connect(&bus, &SessionBus::disconnected, this, &DaemonProxy::onBusLost);
    connect(&bus, &SessionBus::reconnected, this, &DaemonProxy::onBusBack);
}

void DaemonProxy::attach() {
    m_daemon = new Daemon1Interface(api::kBusName, api::kObjectPath, m_bus, this);
    m_boincCalls = new Daemon1Interface(api::kBusName, api::kObjectPath, m_bus, this);
    m_boincCalls->setTimeout(kBoincCallTimeoutMs);
    m_watcher = new QDBusServiceWatcher(api::kBusName, m_bus, QDBusServiceWatcher::WatchForOwnerChange, this);
    connect(m_watcher, &QDBusServiceWatcher::serviceOwnerChanged, this,
            [this](const QString&, const QString&, const QString& newOwner) { onOwnerChanged(newOwner); });
    // Signals are matched by the well-known name, so they keep arriving from a restarted nicerd.
    m_bus.connect(api::kBusName, api::kObjectPath, api::kInterface, "Sample", this,
                  SLOT(onSample(QDBusMessage)));
    m_bus.connect(api::kBusName, api::kObjectPath, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                  this, SLOT(onPropertiesChanged(QDBusMessage)));
}

void DaemonProxy::detach() {
    m_bus.disconnect(api::kBusName, api::kObjectPath, api::kInterface, "Sample", this,
                     SLOT(onSample(QDBusMessage)));
    m_bus.disconnect(api::kBusName, api::kObjectPath, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                     this, SLOT(onPropertiesChanged(QDBusMessage)));
    delete m_watcher;
    delete m_boincCalls;
    delete m_daemon;
}

void DaemonProxy::onBusLost() {
    // The calls under way fail with the closed connection: their errors are not nicerd's, drop them.
    ++m_busGeneration;
    m_starting = false;
    m_startTimeout->stop();
    m_lastSample.reset();
    setConnected(false);
    emit busChanged(false);
}

void DaemonProxy::onBusBack(const QDBusConnection& bus) {
    ++m_busGeneration;
    detach();
    m_bus = bus;
    attach();
    emit busChanged(true);
    if (m_started) {
        // nicerd takes its name on the new bus by itself: follow it there. Start it only if start() asked
        // to and found no bus to do it on.
        start(m_launchWhenBusBack);
    }
}

void DaemonProxy::start(bool launch) {
    m_started = true;
    if (!m_bus.isConnected()) {
        m_launchWhenBusBack = launch;
        if (m_followsBus) {
            setConnected(false);
            emit busChanged(false); // the window says the tray waits for the bus
            return;
        }
        emit errorOccurred(tr("Session bus"),
                           tr("There is no D-Bus session bus, so nicer-tray cannot reach nicerd. Start "
                              "nicer-tray from your desktop session."));
        return;
    }
    m_launchWhenBusBack = false;
    auto call =
        QDBusMessage::createMethodCall(kDbusService, "/org/freedesktop/DBus", kDbusService, "GetNameOwner");
    call << QString(api::kBusName);
    watchReply(
        call, [this](const QDBusMessage& reply) { onOwnerChanged(reply.arguments().value(0).toString()); },
        [this, launch](const QDBusMessage&) {
            if (launch) {
                launchDaemon();
            } else {
                setConnected(false);
            }
        });
}

void DaemonProxy::launchDaemon() {
    if (m_connected || m_starting || !m_bus.isConnected()) {
        return;
    }
    m_starting = true;
    m_startTimeout->start();
    emit connectedChanged(false);
    auto call = QDBusMessage::createMethodCall(kDbusService, "/org/freedesktop/DBus", kDbusService,
                                               "StartServiceByName");
    call << QString(api::kBusName) << 0u;
    // Success needs no action: the name watcher sees nicerd arrive.
    watchReply(call, {}, [this](const QDBusMessage& error) { startUnitFallback(error); });
}

void DaemonProxy::startUnitFallback(const QDBusMessage& activationError) {
    auto call = QDBusMessage::createMethodCall(kSystemdService, kSystemdPath, kSystemdManager, "StartUnit");
    call << QString(kUnitName) << QStringLiteral("replace");
    watchReply(call, {}, [this, activationError](const QDBusMessage& error) {
        m_starting = false;
        m_startTimeout->stop();
        if (isDaemonNotInstalled(activationError.errorName(), error.errorName(), error.errorMessage())) {
            emit errorOccurred(tr("nicerd is not installed"),
                               tr("nicerd (the nicer daemon) is not installed on this computer, so no "
                                  "volunteer work can run. Install the nicer package (sudo apt install "
                                  "./nicer_*.deb) or nicer from your distribution; nicer-tray "
                                  "only shows and tunes it."));
        } else {
            emit errorOccurred(tr("Starting nicerd"),
                               tr("nicerd is not running and could not be started (D-Bus activation: %1; "
                                  "systemd user unit: %2). Install nicer's user service, or run `nicerd` "
                                  "in a terminal.")
                                   .arg(activationError.errorMessage(), error.errorMessage()));
        }
        emit connectedChanged(false);
    });
}

DaemonView DaemonProxy::view() const {
    DaemonView v;
    v.connected = m_connected;
    v.busGone = !hasBus();
    v.paused = m_properties.state.paused;
    v.pausedUntilUSec = m_properties.state.pausedUntilUSec;
    v.lastError = QString::fromStdString(m_properties.state.lastError);
    v.holdReason = QString::fromStdString(m_properties.state.holdReason);
    v.params = m_properties.state.params;
    v.sample = m_lastSample;
    return v;
}

void DaemonProxy::onOwnerChanged(const QString& newOwner) {
    if (m_connected && newOwner == m_owner) {
        return; // the same nicerd told twice: start()'s question, and the bus's notice that it took the name
    }
    setConnected(!newOwner.isEmpty());
    m_owner = newOwner;
}

void DaemonProxy::setConnected(bool connected) {
    if (connected) {
        m_starting = false;
        m_startTimeout->stop();
    }
    const bool changed = connected != m_connected;
    m_connected = connected;
    if (!connected) {
        m_owner.clear();
    }
    if (connected) {
        // A (re)started nicerd: nothing we knew still holds.
        m_lastSample.reset();
        refreshProperties();
        fetchHistory();
    } else if (changed && !m_properties.state.downloads.empty()) {
        // Without nicerd nothing downloads: showing its last rows would say otherwise.
        m_properties.state.downloads.clear();
        m_properties.state.downloadRate = 0.0;
        emit downloadsChanged();
    }
    if (!connected && !(m_properties.state.boinc == api::BoincStatus{})) {
        // Nor does a BOINC client run under nicerd without it.
        m_properties.state.boinc = {};
        emit boincChanged();
    }
    if (changed || !connected) {
        emit connectedChanged(connected);
    }
}

void DaemonProxy::watchReply(const QDBusMessage& call, std::function<void(const QDBusMessage&)> onReply,
                             std::function<void(const QDBusMessage&)> onError) {
    watchReply(m_bus.asyncCall(call), std::move(onReply), std::move(onError));
}

void DaemonProxy::watchReply(const QDBusPendingCall& pending,
                             std::function<void(const QDBusMessage&)> onReply,
                             std::function<void(const QDBusMessage&)> onError) {
    auto* watcher = new QDBusPendingCallWatcher(pending, this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this,
            [this, generation = m_busGeneration, onReply = std::move(onReply),
             onError = std::move(onError)](QDBusPendingCallWatcher* w) {
                w->deleteLater();
                if (generation != m_busGeneration) {
                    return; // asked on a bus that has gone since
                }
                const QDBusMessage reply = w->reply();
                if (reply.type() == QDBusMessage::ErrorMessage) {
                    if (onError) {
                        onError(reply);
                    }
                } else if (onReply) {
                    onReply(reply);
                }
            });
}

void DaemonProxy::refreshProperties() {
    auto call = QDBusMessage::createMethodCall(api::kBusName, api::kObjectPath,
                                               "org.freedesktop.DBus.Properties", "GetAll");
    call << QString(api::kInterface);
    watchReply(
        call,
        [this](const QDBusMessage& reply) {
            readProperties(qdbus_cast<QVariantMap>(reply.arguments().value(0)), true);
        },
        [this](const QDBusMessage& error) {
            if (m_connected) {
                emit errorOccurred(tr("Reading nicerd's state"), error.errorMessage());
            }
        });
}

void DaemonProxy::onPropertiesChanged(const QDBusMessage& message) {
    // (interface, changed properties with their values, invalidated names): nicerd announces its properties
    // with their values, so the third is empty.
    if (message.arguments().value(0).toString() != QLatin1String(api::kInterface)) {
        return;
    }
    readProperties(qdbus_cast<QVariantMap>(message.arguments().value(1)), false);
}

void DaemonProxy::readProperties(const QVariantMap& map, bool whole) {
    if (!m_connected) {
        return; // sent before nicerd left: setConnected(false) cleared what it would bring back
    }
    const api::DaemonState before = m_properties.state;
    auto& state = m_properties.state;
    if (whole) {
        m_properties.publishedParameters.clear();
    }
    // Whole (GetAll): every property, a missing one at its default. Else only those named.
    for (const auto& property : api::daemonProperties()) {
        const auto value = map.constFind(QLatin1String(property.name));
        if (value == map.cend()) {
            if (whole) {
                resetProperty(property, state);
            }
            continue;
        }
        const bool ofItsSignature = readProperty(property, *value, state);
        if (ofItsSignature && whole &&
            std::holds_alternative<const control::ParameterInfo*>(property.field)) {
            m_properties.publishedParameters.append(QLatin1String(property.name));
        }
    }
    announceChanges(before, whole);
}

void DaemonProxy::announceChanges(const api::DaemonState& before, bool whole) {
    // After GetAll the window shows nicerd's state again whatever changed (e.g. its preset, after the
    // window's choice was refused).
    bool others = whole;
    bool downloads = false;
    bool boinc = false;
    for (const auto& property : api::daemonProperties()) {
        if (api::sameValue(property, before, m_properties.state)) {
            continue;
        }
        switch (partOf(property)) {
        case Part::Downloads:
            downloads = true;
            break;
        case Part::Boinc:
            boinc = true;
            break;
        case Part::Others:
            others = true;
            break;
        }
    }
    if (others) {
        emit propertiesChanged();
    }
    if (downloads) {
        emit downloadsChanged();
    }
    if (boinc) {
        emit boincChanged();
    }
}

QDBusPendingCall DaemonProxy::boincRequest(const BoincRequest& request) {
    QDBusPendingCall call = [&]() -> QDBusPendingCall {
        switch (request.kind) {
        case BoincRequest::Kind::Attach:
            return m_boincCalls->BoincAttach(request.url, request.key);
        case BoincRequest::Kind::AttachAccountManager:
            return m_boincCalls->BoincAttachAccountManager(request.url, request.name, request.password);
        case BoincRequest::Kind::Detach:
            break;
        }
        return m_boincCalls->BoincDetach(request.url);
    }();
    // Whatever BOINC answered, nicerd announces the outcome in its lists (a new project, one gone, a notice
    // why not).
    return call;
}

void DaemonProxy::fetchHistory() {
    watchReply(
        m_daemon->GetHistory(),
        [this](const QDBusMessage& reply) {
            const auto history = qdbus_cast<SampleList>(reply.arguments().value(0));
            std::vector<api::Sample> samples(history.begin(), history.end());
            if (!samples.empty()) {
                m_lastSample = samples.back();
            }
            emit historyReceived(samples);
        },
        [this](const QDBusMessage& error) {
            emit errorOccurred(tr("Reading history"), error.errorMessage());
        });
}

void DaemonProxy::onSample(const QDBusMessage& message) {
    // The signal's arguments are a Sample's fields, read by its field list. A signal whose arguments do not
    // begin with them (a nicerd of another version) is dropped.
    api::Sample s;
    if (!readArguments(message.arguments(), message.signature(), s)) {
        return;
    }
    if (!hasBus()) {
        return; // the last words of a bus that closed: nicerd may not be there when it is back
    }
    if (!m_connected) {
        // The signal can beat the name-owner notice after a restart.
        setConnected(true);
    }
    m_lastSample = s;
    emit sampleReceived(s);
}

void DaemonProxy::callSimple(const QDBusPendingCall& call, const QString& context) {
    // nicerd announces the new state (PropertiesChanged).
    watchReply(call, nullptr, [this, context](const QDBusMessage& error) {
        emit errorOccurred(context, error.errorMessage());
    });
}

void DaemonProxy::pause(std::optional<std::chrono::system_clock::time_point> end) {
    if (!end) {
        callSimple(m_daemon->Pause(), tr("Pausing the work"));
        return;
    }
    const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(end->time_since_epoch()).count();
    callSimple(m_daemon->PauseUntil(static_cast<qulonglong>(std::max<qint64>(usec, 0))),
               tr("Pausing the work"));
}

void DaemonProxy::resume() {
    callSimple(m_daemon->Resume(), tr("Resuming the work"));
}

void DaemonProxy::setParameters(const control::ControllerParams& params) {
    QVariantMap map;
    for (const auto& info : control::parameterTable()) {
        if (!m_properties.publishedParameters.contains(QLatin1String(info.busName))) {
            continue; // not nicerd's: it would refuse the whole call
        }
        if (info.type == control::ParameterType::Hours) {
            map.insert(QLatin1String(info.busName), QString::fromStdString(info.getText(params)));
            continue;
        }
        const double value = info.get(params) * info.busScale;
        switch (info.busSignature[0]) {
        case 'u':
            map.insert(QLatin1String(info.busName), static_cast<uint>(std::llround(value)));
            break;
        case 't':
            map.insert(QLatin1String(info.busName), static_cast<qulonglong>(std::llround(value)));
            break;
        default:
            map.insert(QLatin1String(info.busName), value);
            break;
        }
    }
    watchReply(
        m_daemon->SetParameters(map),
        [this](const QDBusMessage&) { emit parametersApplied(); }, // the values come by PropertiesChanged
        [this](const QDBusMessage& error) {
            emit errorOccurred(tr("Applying the controller settings"), error.errorMessage());
        });
}

void DaemonProxy::setWorkloadPreset(const QString& id) {
    watchReply(
        m_daemon->SetWorkloadPreset(id),
        [](const QDBusMessage&) {}, // the workload comes by PropertiesChanged
        [this](const QDBusMessage& error) {
            // Show nicerd's choice again in the GUI: nothing changed, except maybe whether the preset's
            // program is installed (WorkloadPresets, never announced).
            refreshProperties();
            emit errorOccurred(tr("Switching the workload"), error.errorMessage());
        });
}

void DaemonProxy::setExclusivePrograms(const QStringList& names) {
    watchReply(
        m_daemon->SetExclusivePrograms(names),
        [](const QDBusMessage&) {}, // the list comes by PropertiesChanged
        [this](const QDBusMessage& error) {
            // Nothing changed: read nicerd's list again, so that the window shows it instead of the refused
            // one.
            refreshProperties();
            emit errorOccurred(tr("Setting the programs that pause the work"), error.errorMessage());
        });
}

} // namespace nicer::tray
