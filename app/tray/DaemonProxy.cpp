#include "tray/DaemonProxy.h"

#include "Daemon1Interface.h"
#include "api/BusNames.h"
#include "api/DownloadEntry.h"
#include "control/ParameterTable.h"
#include "tray/SessionBus.h"

#include <QDBusArgument>
#include <QDBusConnectionInterface>
#include <QDBusPendingCallWatcher>
#include <QDBusServiceWatcher>
#include <QTimer>

#include <chrono>
#include <cmath>

namespace nicer::tray {

namespace {

constexpr auto kDbusService = "org.freedesktop.DBus";
constexpr auto kSystemdService = "org.freedesktop.systemd1";
constexpr auto kSystemdPath = "/org/freedesktop/systemd1";
constexpr auto kSystemdManager = "org.freedesktop.systemd1.Manager";
constexpr auto kUnitName = "nicerd.service";
// nicerd is Type=notify and takes its name only when ready; give a slow machine time before saying so.
constexpr int kStartTimeoutMs = 20000;
// nicerd answers BoincAttach and the others when BOINC has, which can take a minute (the project's page is
// fetched first); past this, the call fails on our side with NoReply.
constexpr int kBoincCallTimeoutMs = 90000;

/// A property read by GetAll or PropertiesChanged that holds structs (a QDBusArgument), as @p T; empty when
/// it is missing (an older nicerd) or has another signature (one of another ApiVersion).
template <typename T>
T readStructs(const QVariant& value, const char* fields) {
    if (!value.canConvert<QDBusArgument>()) {
        return {};
    }
    const auto arg = qvariant_cast<QDBusArgument>(value);
    if (arg.currentSignature() != QStringLiteral("a(%1)").arg(QLatin1String(fields))) {
        return {};
    }
    return qdbus_cast<T>(arg);
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
    connect(m_daemon, &Daemon1Interface::Sample, this, &DaemonProxy::onSample);
    m_bus.connect(api::kBusName, api::kObjectPath, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                  this, SLOT(onPropertiesChanged(QDBusMessage)));
}

void DaemonProxy::detach() {
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
    v.paused = m_properties.paused;
    v.lastError = m_properties.lastError;
    v.params = m_properties.params;
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
    } else if (changed && !m_properties.downloads.empty()) {
        // Without nicerd nothing downloads: showing its last rows would say otherwise.
        m_properties.downloads.clear();
        m_properties.downloadRate = 0.0;
        emit downloadsChanged();
    }
    if (!connected && !(m_properties.boinc == api::BoincStatus{})) {
        // Nor does a BOINC client run under nicerd without it.
        m_properties.boinc = {};
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
    // Whole (GetAll): every property, a missing one (an older nicerd) at its default. Else only those named.
    const auto has = [&](const char* name) { return whole || map.contains(QLatin1String(name)); };
    const auto value = [&](const char* name) { return map.value(QLatin1String(name)); };
    auto& p = m_properties;
    bool others = whole;
    if (whole) {
        p.publishedParameters.clear();
    }
    for (const auto& info : control::parameterTable()) {
        const QLatin1String name(info.busName);
        if (!map.contains(name)) {
            continue; // unchanged, or a parameter newer than this nicerd: shown at its default, never sent
        }
        if (whole) {
            p.publishedParameters.append(name);
        }
        // The D-Bus value (ReserveBand, ..., PeriodUSec in µs) in the table's unit.
        (void)info.set(p.params,
                       map.value(name).toDouble() / info.busScale); // an absurd period: keep the last
        others = true;
    }
    const auto read = [&](const char* name, auto&& assign) {
        if (has(name)) {
            assign(value(name));
            others = true;
        }
    };
    read("Paused", [&](const QVariant& v) { p.paused = v.toBool(); });
    read("Actuator", [&](const QVariant& v) { p.actuator = v.toString(); });
    read("ActuatorNote", [&](const QVariant& v) { p.actuatorNote = v.toString(); });
    read("Placement", [&](const QVariant& v) { p.placement = v.toString(); });
    read("PlacementNote", [&](const QVariant& v) { p.placementNote = v.toString(); });
    read("Workload", [&](const QVariant& v) { p.workload = v.toStringList(); });
    read("WorkloadPreset", [&](const QVariant& v) { p.preset = v.toString(); });
    read("DemoWorkload", [&](const QVariant& v) { p.demoWorkload = v.toBool(); });
    read("Instances", [&](const QVariant& v) { p.instances = v.toUInt(); });
    read("LastError", [&](const QVariant& v) { p.lastError = v.toString(); });
    if (whole) {
        // Never announced: constant, or read again when needed (WorkloadPresets).
        p.apiVersion = map.value("ApiVersion", 1U).toUInt();
        p.presets = readStructs<PresetChoiceList>(map.value("WorkloadPresets"), api::kPresetSignature);
        p.cpuCount = map.value("CpuCount").toUInt();
        p.bandwidth.kind = api::bandwidthKindFromKeyword(map.value("BandwidthMode").toString().toStdString())
                               .value_or(api::BandwidthMode::Kind::None);
        const qulonglong cap = map.value("BandwidthCap").toULongLong();
        p.bandwidth.capBytesPerSecond = cap > 0 ? std::optional<std::uint64_t>(cap) : std::nullopt;
    }
    const bool downloads = has("Downloads") || has("DownloadRate");
    if (has("Downloads")) {
        p.downloads = readStructs<DownloadRowList>(value("Downloads"), api::kDownloadSignature);
    }
    if (has("DownloadRate")) {
        p.downloadRate = value("DownloadRate").toDouble();
    }
    const bool boinc = readBoinc(map, whole);
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

bool DaemonProxy::readBoinc(const QVariantMap& map, bool whole) {
    const auto has = [&](const char* name) { return whole || map.contains(QLatin1String(name)); };
    const auto value = [&](const char* name) { return map.value(QLatin1String(name)); };
    api::BoincStatus b = m_properties.boinc;
    if (has("BoincState")) {
        // Missing in a nicerd older than API version 3: no BOINC client then, as far as the tray can tell.
        const QString state = value("BoincState").toString();
        b.state = state.isEmpty() ? std::string("off") : state.toStdString();
    }
    if (has("BoincDetail")) {
        b.detail = value("BoincDetail").toString().toStdString();
    }
    if (has("BoincSystemService")) {
        b.systemService = value("BoincSystemService").toString().toStdString();
    }
    if (has("BoincOverrideApplied")) {
        b.overrideApplied = value("BoincOverrideApplied").toBool();
    }
    if (has("BoincMaxDownRate")) {
        b.maxDownRate = value("BoincMaxDownRate").toDouble();
    }
    if (has("BoincMaxUpRate")) {
        b.maxUpRate = value("BoincMaxUpRate").toDouble();
    }
    const auto list = [&](const char* name, auto& field, auto parsed) {
        if (has(name)) {
            field.assign(parsed.begin(), parsed.end());
        }
    };
    list("BoincProjects", b.projects,
         readStructs<BoincProjectList>(value("BoincProjects"), api::kBoincProjectSignature));
    list("BoincTasks", b.tasks, readStructs<BoincTaskList>(value("BoincTasks"), api::kBoincTaskSignature));
    list("BoincTransfers", b.transfers,
         readStructs<BoincTransferList>(value("BoincTransfers"), api::kBoincTransferSignature));
    list("BoincNotices", b.notices,
         readStructs<BoincNoticeList>(value("BoincNotices"), api::kBoincNoticeSignature));
    if (b == m_properties.boinc) {
        return false;
    }
    m_properties.boinc = std::move(b);
    return true;
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

void DaemonProxy::onSample(qulonglong timeUSec, double idle, double foreground, double background,
                           double outside, double quota, double multiplier, uint overloadCount, bool paused,
                           bool outsideSignal) {
    const api::Sample s{timeUSec, idle,       foreground,    background, outside,
                        quota,    multiplier, overloadCount, paused,     outsideSignal};
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

void DaemonProxy::pause() {
    callSimple(m_daemon->Pause(), tr("Pausing the work"));
}

void DaemonProxy::resume() {
    callSimple(m_daemon->Resume(), tr("Resuming the work"));
}

void DaemonProxy::setParameters(const control::ControllerParams& params) {
    QVariantMap map;
    for (const auto& info : control::parameterTable()) {
        if (!m_properties.publishedParameters.contains(QLatin1String(info.busName))) {
            continue; // this nicerd is older than the parameter and would refuse the whole call
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

} // namespace nicer::tray
