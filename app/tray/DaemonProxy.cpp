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
// Downloads change without a signal: read them every second while they move, and now and then while a
// failed file waits for nicerd's retry (minutes away), to see it start.
constexpr int kActiveDownloadPollMs = 1000;
constexpr int kRetryDownloadPollMs = 10000;
// BOINC's lists change without a signal: read them every two seconds while someone looks at them.
constexpr int kBoincPollMs = 2000;
// nicerd answers BoincAttach and the others when BOINC has, which can take a minute (the project's page is
// fetched first); past this, the call fails on our side with NoReply.
constexpr int kBoincCallTimeoutMs = 90000;

/// A property read by GetAll that holds structs (a QDBusArgument), as @p T; empty when it is missing (an
/// older nicerd) or has another signature (one of another ApiVersion).
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
    , m_startTimeout(new QTimer(this))
    , m_downloadPoll(new QTimer(this))
    , m_boincPoll(new QTimer(this)) {
    registerBusTypes();
    connect(m_downloadPoll, &QTimer::timeout, this, &DaemonProxy::refreshDownloads);
    m_boincPoll->setInterval(kBoincPollMs);
    connect(m_boincPoll, &QTimer::timeout, this, &DaemonProxy::refreshBoinc);
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
    m_downloadsPending = false;
    m_boincPending = false;
    m_lastSample.reset();
    setConnected(false);
    emit busChanged(false);
}

void DaemonProxy::onBusBack(const QDBusConnection& bus) {
    ++m_busGeneration;
    m_downloadsPending = false;
    m_boincPending = false;
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
    setConnected(!newOwner.isEmpty());
}

void DaemonProxy::setConnected(bool connected) {
    if (connected) {
        m_starting = false;
        m_startTimeout->stop();
    }
    const bool changed = connected != m_connected;
    m_connected = connected;
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
    updateDownloadPolling();
    updateBoincPolling();
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
            const QVariantMap map = qdbus_cast<QVariantMap>(reply.arguments().value(0));
            auto& p = m_properties;
            p.publishedParameters.clear();
            for (const auto& info : control::parameterTable()) {
                const QLatin1String name(info.busName);
                if (!map.contains(name)) {
                    continue; // a parameter newer than this nicerd: shown at its default, never sent
                }
                p.publishedParameters.append(name);
                // The D-Bus value (ReserveBand, ..., PeriodUSec in µs) in the table's unit.
                const double value = map.value(name).toDouble() / info.busScale;
                (void)info.set(p.params, value); // only an absurd period fails: keep the last one
            }
            p.paused = map.value("Paused").toBool();
            p.actuator = map.value("Actuator").toString();
            p.actuatorNote = map.value("ActuatorNote").toString();
            p.apiVersion = map.value("ApiVersion", 1U).toUInt();
            p.workload = map.value("Workload").toStringList();
            p.preset = map.value("WorkloadPreset").toString();
            p.presets = readStructs<PresetChoiceList>(map.value("WorkloadPresets"), api::kPresetSignature);
            p.demoWorkload = map.value("DemoWorkload").toBool();
            p.instances = map.value("Instances").toUInt();
            p.cpuCount = map.value("CpuCount").toUInt();
            p.lastError = map.value("LastError").toString();
            p.bandwidth.kind =
                api::bandwidthKindFromKeyword(map.value("BandwidthMode").toString().toStdString())
                    .value_or(api::BandwidthMode::Kind::None);
            const qulonglong cap = map.value("BandwidthCap").toULongLong();
            p.bandwidth.capBytesPerSecond = cap > 0 ? std::optional<std::uint64_t>(cap) : std::nullopt;
            readDownloads(map);
            readBoinc(map);
            emit propertiesChanged();
            emit downloadsChanged();
        },
        [this](const QDBusMessage& error) {
            if (m_connected) {
                emit errorOccurred(tr("Reading nicerd's state"), error.errorMessage());
            }
        });
}

void DaemonProxy::readDownloads(const QVariantMap& map) {
    if (!m_connected) {
        return; // an answer sent before nicerd left: setConnected(false) cleared what it would bring back
    }
    m_properties.downloads = readStructs<DownloadRowList>(map.value("Downloads"), api::kDownloadSignature);
    m_properties.downloadRate = map.value("DownloadRate").toDouble();
    updateDownloadPolling();
}

void DaemonProxy::refreshDownloads() {
    if (m_downloadsPending) {
        return; // a slow nicerd must not pile up calls
    }
    m_downloadsPending = true;
    auto call = QDBusMessage::createMethodCall(api::kBusName, api::kObjectPath,
                                               "org.freedesktop.DBus.Properties", "GetAll");
    call << QString(api::kInterface);
    watchReply(
        call,
        [this](const QDBusMessage& reply) {
            m_downloadsPending = false;
            readDownloads(qdbus_cast<QVariantMap>(reply.arguments().value(0)));
            emit downloadsChanged();
        },
        // A failure here is nicerd going away, which the name watcher reports.
        [this](const QDBusMessage&) { m_downloadsPending = false; });
}

void DaemonProxy::setWatchingDownloads(bool watching) {
    const bool started = watching && !m_watchingDownloads;
    m_watchingDownloads = watching;
    if (started && m_connected && !m_properties.downloads.empty()) {
        refreshDownloads(); // what was read while hidden is old
    }
    updateDownloadPolling();
}

int DaemonProxy::downloadPollInterval() const {
    return m_downloadPoll->isActive() ? m_downloadPoll->interval() : 0;
}

void DaemonProxy::updateDownloadPolling() {
    bool active = false;
    bool failed = false;
    for (const auto& row : m_properties.downloads) {
        active = active || api::isDownloadActive(row.state);
        failed = failed || row.state == api::DownloadState::Failed;
    }
    const int interval = active ? kActiveDownloadPollMs : failed ? kRetryDownloadPollMs : 0;
    if (!m_watchingDownloads || !m_connected || interval == 0) {
        m_downloadPoll->stop();
        return;
    }
    if (m_downloadPoll->interval() != interval || !m_downloadPoll->isActive()) {
        m_downloadPoll->start(interval);
    }
}

void DaemonProxy::readBoinc(const QVariantMap& map) {
    if (!m_connected) {
        return; // as in readDownloads: no BOINC client runs under a nicerd that has left
    }
    api::BoincStatus b;
    // Missing in a nicerd older than API version 3: no BOINC client then, as far as the tray can tell.
    const QString state = map.value("BoincState").toString();
    b.state = state.isEmpty() ? std::string("off") : state.toStdString();
    b.detail = map.value("BoincDetail").toString().toStdString();
    b.systemService = map.value("BoincSystemService").toString().toStdString();
    b.overrideApplied = map.value("BoincOverrideApplied").toBool();
    b.maxDownRate = map.value("BoincMaxDownRate").toDouble();
    b.maxUpRate = map.value("BoincMaxUpRate").toDouble();
    const auto projects =
        readStructs<BoincProjectList>(map.value("BoincProjects"), api::kBoincProjectSignature);
    b.projects.assign(projects.begin(), projects.end());
    const auto tasks = readStructs<BoincTaskList>(map.value("BoincTasks"), api::kBoincTaskSignature);
    b.tasks.assign(tasks.begin(), tasks.end());
    const auto transfers =
        readStructs<BoincTransferList>(map.value("BoincTransfers"), api::kBoincTransferSignature);
    b.transfers.assign(transfers.begin(), transfers.end());
    const auto notices = readStructs<BoincNoticeList>(map.value("BoincNotices"), api::kBoincNoticeSignature);
    b.notices.assign(notices.begin(), notices.end());
    const bool changed = !(b == m_properties.boinc);
    m_properties.boinc = std::move(b);
    updateBoincPolling();
    if (changed) {
        emit boincChanged();
    }
}

void DaemonProxy::refreshBoinc() {
    if (m_boincPending || !m_connected) {
        return; // a slow nicerd must not pile up calls
    }
    m_boincPending = true;
    auto call = QDBusMessage::createMethodCall(api::kBusName, api::kObjectPath,
                                               "org.freedesktop.DBus.Properties", "GetAll");
    call << QString(api::kInterface);
    watchReply(
        call,
        [this](const QDBusMessage& reply) {
            m_boincPending = false;
            readBoinc(qdbus_cast<QVariantMap>(reply.arguments().value(0)));
        },
        // A failure here is nicerd going away, which the name watcher reports.
        [this](const QDBusMessage&) { m_boincPending = false; });
}

void DaemonProxy::setWatchingBoinc(bool watching) {
    const bool started = watching && !m_watchingBoinc;
    m_watchingBoinc = watching;
    if (started && m_connected && m_properties.boinc.state != "off") {
        refreshBoinc(); // what was read while hidden is old
    }
    updateBoincPolling();
}

int DaemonProxy::boincPollInterval() const {
    return m_boincPoll->isActive() ? m_boincPoll->interval() : 0;
}

void DaemonProxy::updateBoincPolling() {
    // While BOINC is off nothing in its lists moves, and its state arrives by PropertiesChanged.
    const bool poll = m_watchingBoinc && m_connected && m_properties.boinc.state != "off";
    if (!poll) {
        m_boincPoll->stop();
    } else if (!m_boincPoll->isActive()) {
        m_boincPoll->start();
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
    // Whatever BOINC answered, its lists show the outcome (a new project, one gone, a notice why not).
    watchReply(
        call, [this](const QDBusMessage&) { refreshBoinc(); },
        [this](const QDBusMessage&) { refreshBoinc(); });
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
                           double quota, double multiplier, uint overloadCount, bool paused) {
    const api::Sample s{timeUSec, idle, foreground, background, quota, multiplier, overloadCount, paused};
    if (!hasBus()) {
        return; // the last words of a bus that closed: nicerd may not be there when it is back
    }
    if (!m_connected) {
        // The signal can beat the name-owner notice after a restart.
        setConnected(true);
    }
    if (s.paused != m_properties.paused) {
        refreshProperties();
    }
    m_lastSample = s;
    emit sampleReceived(s);
}

void DaemonProxy::onPropertiesChanged(const QDBusMessage&) {
    refreshProperties();
}

void DaemonProxy::callSimple(const QDBusPendingCall& call, const QString& context) {
    watchReply(
        call, [this](const QDBusMessage&) { refreshProperties(); },
        [this, context](const QDBusMessage& error) { emit errorOccurred(context, error.errorMessage()); });
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
        [this](const QDBusMessage&) {
            refreshProperties();
            emit parametersApplied();
        },
        [this](const QDBusMessage& error) {
            emit errorOccurred(tr("Applying the controller settings"), error.errorMessage());
        });
}

void DaemonProxy::setWorkloadPreset(const QString& id) {
    watchReply(
        m_daemon->SetWorkloadPreset(id),
        [this](const QDBusMessage&) {
            refreshProperties();
            emit workloadPresetApplied();
        },
        [this](const QDBusMessage& error) {
            // Show nicerd's choice again in the GUI: nothing changed.
            refreshProperties();
            emit errorOccurred(tr("Switching the workload"), error.errorMessage());
        });
}

} // namespace nicer::tray
