#include "tray/MainWindow.h"

#include "control/Presence.h"
#include "control/WorkRules.h"
#include "tray/BoincPanel.h"
#include "tray/CpuChart.h"
#include "tray/DaemonProxy.h"
#include "tray/DownloadsPanel.h"
#include "tray/ParametersPanel.h"
#include "tray/SnoozeMenu.h"
#include "tray/StateIcon.h"
#include "util/Text.h"

#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QShowEvent>
#include <QStyle>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace nicer::tray {

namespace {

constexpr std::chrono::seconds kChartSpan{300};

QString percent(double share) {
    return QString::number(100.0 * share, 'f', 1) + QStringLiteral(" %");
}

QStringList toStringList(const std::vector<std::string>& words) {
    QStringList list;
    for (const auto& word : words) {
        list.append(QString::fromStdString(word));
    }
    return list;
}

} // namespace

MainWindow::MainWindow(DaemonProxy& daemon, bool quitOnClose, QWidget* parent)
    : MainWindow(daemon, quitOnClose, Autostart(Autostart::userDirectory()), parent) {}

MainWindow::MainWindow(DaemonProxy& daemon, bool quitOnClose, Autostart autostart, QWidget* parent)
    : QWidget(parent)
    , m_daemon(daemon)
    , m_quitOnClose(quitOnClose)
    , m_history(kChartSpan)
    , m_autostart(std::move(autostart)) {
    setWindowTitle(tr("nicer: spare CPU for volunteer computing"));
    setWindowIcon(stateIcon(TrayState::Running));
    buildErrorBar();
    buildNotice();

    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(buildOverview(), tr("Overview"));
    m_tabs->addTab(buildBoincTab(), tr("BOINC"));

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_errorBar);
    layout->addWidget(m_notice);
    layout->addWidget(m_tabs, 1);

    connectDaemon();
    onConnection(m_daemon.isConnected());
    resize(960, 640);
}

void MainWindow::buildErrorBar() {
    // Errors: what failed and what to do, with the one action that usually fixes it.
    m_errorBar = new QWidget(this);
    m_errorBar->setAutoFillBackground(true);
    QPalette bar = m_errorBar->palette();
    bar.setColor(QPalette::Window, QColor(0xd0, 0x3b, 0x3b));
    bar.setColor(QPalette::WindowText, Qt::white);
    m_errorBar->setPalette(bar);
    m_error = new QLabel(m_errorBar);
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setAccessibleName(tr("Error"));
    m_startDaemon = new QPushButton(tr("Start nicerd"), m_errorBar);
    m_startDaemon->setAccessibleName(tr("Start the nicer daemon"));
    auto* barLayout = new QHBoxLayout(m_errorBar);
    barLayout->addWidget(m_error, 1);
    barLayout->addWidget(m_startDaemon);
    m_errorBar->hide();
    connect(m_startDaemon, &QPushButton::clicked, &m_daemon, &DaemonProxy::launchDaemon);
}

void MainWindow::buildNotice() {
    m_notice = new QLabel(this);
    m_notice->setWordWrap(true);
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse); // the fix it gives is a command to copy
    m_notice->setAccessibleName(tr("Notice"));
    m_notice->setStyleSheet("QLabel { background: #fff3cd; color: #664d03; padding: 6px; }");
    m_notice->hide();
}

QWidget* MainWindow::buildOverview() {
    auto* overview = new QWidget(m_tabs);
    m_chart = new CpuChart(m_history, overview);
    auto* now = new QWidget(overview);
    auto* form = new QFormLayout(now);
    buildValues(form);
    buildControls(now, form);

    m_parameters = new ParametersPanel(overview);
    connect(m_parameters, &ParametersPanel::applyRequested, &m_daemon, &DaemonProxy::setParameters);
    connect(m_parameters, &ParametersPanel::programsApplyRequested, &m_daemon,
            &DaemonProxy::setExclusivePrograms);
    m_downloads = new DownloadsPanel(overview);

    auto* top = new QHBoxLayout();
    top->addWidget(m_chart, 1);
    top->addWidget(now);
    auto* overviewLayout = new QVBoxLayout(overview);
    overviewLayout->setContentsMargins(0, 6, 0, 0);
    overviewLayout->addLayout(top, 1);
    overviewLayout->addWidget(m_downloads);
    overviewLayout->addWidget(m_parameters);
    return overview;
}

void MainWindow::buildValues(QFormLayout* form) {
    m_values = form;
    m_status = new QLabel(form->parentWidget());
    m_status->setAccessibleName(tr("State"));
    m_status->setWordWrap(true); // a rule's hold says why in a sentence
    form->addRow(m_status);
    m_user =
        addKeyedValue(form, CpuChart::Key::User, tr("Your programs"),
                      tr("CPU used by everything except the volunteer work, or, where nicerd can tell them "
                         "apart, by everything else under your user manager (your session's programs)"));
    m_others =
        addKeyedValue(form, CpuChart::Key::Others, tr("Other users and services"),
                      tr("CPU used outside your user manager: system services, containers and VMs, other "
                         "users. Your programs win the CPU from the work by its idle weight at once; these "
                         "only by the work's cap."));
    m_work =
        addKeyedValue(form, CpuChart::Key::Work, tr("Volunteer work"), tr("CPU used by the volunteer work"));
    m_idle = addKeyedValue(form, CpuChart::Key::Idle, tr("Idle"), tr("CPU nobody used"));
    m_reserve = addKeyedValue(form, CpuChart::Key::Band, tr("Reserve band"),
                              tr("Idle CPU the controller keeps free for you: multiplier x band"));
    m_cap = addKeyedValue(form, CpuChart::Key::Cap, tr("Work cap"), tr("The most CPU the work may use now"));
    m_temperature = addKeyedValue(form, CpuChart::Key::Temperature, tr("CPU temperature"),
                                  tr("The CPU's temperature, and the target your rule holds it to"));
    m_fans = addValue(form, tr("Fans"), tr("The fastest fan's speed, and the target your rule holds it to"));
    m_power = addValue(form, tr("Power"), tr("Whether this computer runs on battery or in power saver"));
    m_memory = addValue(form, tr("Memory"),
                        tr("The work's memory, how long programs beside it waited on memory in the last "
                           "period, and how the memory rule holds the work"));
    m_presence =
        addValue(form, tr("You"),
                 tr("Whether you are at this computer: input within the away delay, and the screen not "
                    "locked"));
    m_ruleNotes = new QLabel(form->parentWidget());
    m_ruleNotes->setWordWrap(true);
    m_ruleNotes->setAccessibleName(tr("Notes on your rules"));
    m_ruleNotes->setForegroundRole(QPalette::PlaceholderText); // a detail, not an alarm
    // Each line whole: the panel grows rather than cut the notes short.
    m_ruleNotes->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
    m_ruleNotes->hide();
    form->addRow(m_ruleNotes);
    updateChartKey();
    connect(m_chart, &CpuChart::keyChanged, this, &MainWindow::updateChartKey);
    m_overloads = addValue(form, tr("Overloads"), tr("Periods in a row with no idle CPU, and the limit"));
    m_actuator = addValue(form, tr("Limited by"), tr("How nicerd holds the work back"));
    m_placement =
        addValue(form, tr("Protected"), tr("Which programs the kernel puts before the work at once"));
    m_placement->setWordWrap(true);
    m_workload = addValue(form, tr("Workload"), tr("The volunteer program nicerd runs"));
    m_workload->setWordWrap(true);
}

void MainWindow::buildControls(QWidget* now, QFormLayout* form) {
    m_preset = new QComboBox(now);
    m_preset->setAccessibleName(tr("Workload preset"));
    m_preset->setToolTip(tr("What volunteer work nicerd runs; nicerd keeps the choice."));
    form->addRow(new QLabel(tr("Preset"), now), m_preset);
    connect(m_preset, &QComboBox::activated, this, [this](int index) {
        const QString id = m_preset->itemData(index).toString();
        if (id.toStdString() != m_daemon.properties().state.workloadPreset) {
            m_daemon.setWorkloadPreset(id);
        }
    });
    // A click pauses until you resume, or resumes; its arrow snoozes (SnoozeMenu): for an hour, for the rest
    // of today, also while paused (the snooze then sets when the pause ends). The status says until when.
    m_pause = new QToolButton(now);
    m_pause->setText(tr("Pause"));
    m_pause->setCheckable(true);
    m_pause->setPopupMode(QToolButton::MenuButtonPopup);
    m_pause->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_pause->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_pause->setMenu(new SnoozeMenu(m_daemon, m_pause));
    m_pause->setAccessibleName(tr("Pause the volunteer work"));
    form->addRow(m_pause);
    connect(m_pause, &QToolButton::clicked, this, [this](bool checked) {
        if (checked) {
            m_daemon.pause();
        } else {
            m_daemon.resume();
        }
    });

    // A setting of the tray itself, not of nicerd: it works whether or not nicerd runs.
    m_startAtLogin = new QCheckBox(tr("Start at login"), now);
    m_startAtLogin->setAccessibleName(tr("Start nicer-tray at login"));
    m_startAtLogin->setChecked(m_autostart.isEnabled());
    if (m_autostart.isSupported()) {
        m_startAtLogin->setToolTip(
            tr("Put nicer in the tray when you log in (%1).").arg(m_autostart.entryPath()));
    } else {
        m_startAtLogin->setEnabled(false);
        m_startAtLogin->setToolTip(m_autostart.unsupportedReason());
    }
    form->addRow(m_startAtLogin);
    connect(m_startAtLogin, &QCheckBox::toggled, this, &MainWindow::setStartAtLogin);
}

QWidget* MainWindow::buildBoincTab() {
    // BOINC, when nicerd runs it: its own tab, since its tables need the window's height.
    m_boinc = new BoincPanel(m_tabs);
    m_boinc->setRequestHandler(
        [this](const BoincRequest& request) { return m_daemon.boincRequest(request); });
    connect(m_boinc, &BoincPanel::boincWorkloadRequested, this,
            [this] { m_daemon.setWorkloadPreset(QStringLiteral("boinc")); });
    return m_boinc;
}

void MainWindow::connectDaemon() {
    connect(&m_daemon, &DaemonProxy::sampleReceived, this, &MainWindow::onSample);
    connect(&m_daemon, &DaemonProxy::historyReceived, this, &MainWindow::onHistory);
    connect(&m_daemon, &DaemonProxy::propertiesChanged, this, &MainWindow::onProperties);
    connect(&m_daemon, &DaemonProxy::downloadsChanged, this, [this] {
        const auto& state = m_daemon.properties().state;
        m_downloads->setDownloads(state.downloads, state.downloadRate, api::bandwidthOf(state));
    });
    connect(&m_daemon, &DaemonProxy::boincChanged, this, &MainWindow::updateBoinc);
    connect(&m_daemon, &DaemonProxy::connectedChanged, this, &MainWindow::onConnection);
    connect(&m_daemon, &DaemonProxy::busChanged, this, &MainWindow::onBus);
    connect(&m_daemon, &DaemonProxy::errorOccurred, this, &MainWindow::showError);
    connect(&m_daemon, &DaemonProxy::parametersApplied, this, [this] { m_errorBar->hide(); });
}

QLabel* MainWindow::addValue(QFormLayout* form, const QString& label, const QString& help) {
    auto* value = new QLabel(QStringLiteral("-"), this);
    value->setAccessibleName(label);
    value->setToolTip(help);
    auto* name = new QLabel(label, this);
    name->setToolTip(help);
    form->addRow(name, value);
    return value;
}

QLabel* MainWindow::addKeyedValue(QFormLayout* form, CpuChart::Key key, const QString& label,
                                  const QString& help) {
    QLabel* value = addValue(form, label, help);
    auto* name = qobject_cast<QLabel*>(form->labelForField(value));
    name->setAccessibleName(label); // the words, without the mark
    m_chartKey.emplace_back(name, key);
    return value;
}

void MainWindow::updateChartKey() {
    for (const auto& [name, key] : m_chartKey) {
        name->setText(m_chart->keyMark(key) + QStringLiteral("&nbsp;") +
                      name->accessibleName().toHtmlEscaped());
    }
}

QString MainWindow::noticeText() const {
    return m_notice->isVisibleTo(this) ? m_notice->text() : QString();
}

QString MainWindow::errorText() const {
    return m_errorBar->isVisibleTo(this) ? m_error->text() : QString();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (m_quitOnClose) {
        QApplication::quit();
    }
    event->accept();
}

void MainWindow::setStartAtLogin(bool enabled) {
    if (const auto done = m_autostart.setEnabled(enabled); !done) {
        {
            const QSignalBlocker block(m_startAtLogin);
            m_startAtLogin->setChecked(m_autostart.isEnabled());
        }
        showError(tr("Start at login"), QString::fromStdString(done.error().message));
    }
}

void MainWindow::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    {
        // The entry may have been removed meanwhile, e.g. in the desktop's own settings.
        const QSignalBlocker block(m_startAtLogin);
        m_startAtLogin->setChecked(m_autostart.isEnabled());
    }
}

void MainWindow::onSample(const api::Sample& sample) {
    m_history.append(sample, m_daemon.properties().state.params.reserveBand);
    m_chart->refresh();
    if (isVisible()) {
        updateValues();
    }
}

void MainWindow::onHistory(const std::vector<api::Sample>& samples) {
    m_history.reset(samples, m_daemon.properties().state.params.reserveBand);
    m_chart->refresh();
    updateValues();
}

void MainWindow::onProperties() {
    const auto& p = m_daemon.properties().state;
    m_parameters->setParams(p.params);
    m_parameters->setPrograms(toStringList(p.exclusivePrograms), toStringList(p.programsRunning));
    {
        const QSignalBlocker block(m_pause);
        m_pause->setChecked(p.paused);
    }
    m_pause->setText(p.paused ? tr("Resume") : tr("Pause"));
    m_pause->setAccessibleName(p.paused ? tr("Resume the volunteer work") : tr("Pause the volunteer work"));
    showPlacement();
    m_actuator->setText(actuatorText(p.actuator));
    // Why the actuator caps less well than it could, and the fix.
    m_notice->setVisible(!p.actuatorNote.empty());
    m_notice->setText(QString::fromStdString(p.actuatorNote));
    QString workload = toStringList(p.workload).join(' ');
    if (p.demoWorkload) {
        workload = tr("%1 (built-in demo)").arg(workload);
    }
    if (p.instances > 1) {
        workload += tr(", %n copies", nullptr, static_cast<int>(p.instances));
    }
    m_workload->setText(workload);
    m_chart->setTemperatureTarget(p.temperatureTargetInUse);
    updatePresets();
    showDaemonError();
    updateValues();
}

void MainWindow::showPlacement() {
    // Where the work runs; the note says why, and in the user slice what would protect everything.
    const auto& p = m_daemon.properties().state;
    m_placement->setText(p.placement == api::Placement::RootSlice
                             ? tr("Everywhere: every program on this computer comes before the work")
                             : tr("Inside your user session only"));
    m_placement->setToolTip(QString::fromStdString(p.placementNote));
}

QString MainWindow::actuatorText(api::Actuator actuator) {
    switch (actuator) {
    case api::Actuator::SystemdSlice:
        return tr("CPU quota of a systemd slice");
    case api::Actuator::SignalDutyCycle:
        return tr("stop/continue in short bursts");
    case api::Actuator::FreezerDutyCycle:
        return tr("freeze/thaw in short bursts");
    }
    return {};
}

void MainWindow::showDaemonError() {
    const auto& lastError = m_daemon.properties().state.lastError;
    if (!lastError.empty()) {
        QString what = QString::fromStdString(lastError);
        if (what.contains(QLatin1String("quota"))) {
            what += tr(" nicerd keeps trying every period; if it persists, restart nicerd or choose "
                       "another actuator in its configuration.");
        }
        showError(tr("nicerd reports"), what);
        m_showingDaemonError = true;
    } else if (m_showingDaemonError) {
        // nicerd got over it (e.g. the quota applies again): its error no longer holds.
        m_errorBar->hide();
        m_showingDaemonError = false;
        updateStatus();
    }
}

void MainWindow::updatePresets() {
    const auto& p = m_daemon.properties().state;
    const QSignalBlocker block(m_preset);
    m_preset->clear();
    for (const auto& preset : p.workloadPresets) {
        const QString name = QString::fromStdString(preset.name);
        // An unavailable preset stays selectable: choosing it brings nicerd's answer, which says how to
        // install it.
        m_preset->addItem(
            preset.available || preset.id == p.workloadPreset ? name : tr("%1 (not installed)").arg(name),
            QString::fromStdString(preset.id));
        m_preset->setItemData(m_preset->count() - 1, QString::fromStdString(preset.description),
                              Qt::ToolTipRole);
        if (preset.id == p.workloadPreset) {
            m_preset->setCurrentIndex(m_preset->count() - 1);
        }
    }
}

void MainWindow::updateBoinc() {
    const auto& boinc = m_daemon.properties().state.boinc;
    m_boinc->setStatus(boinc);
    // Something the volunteer should see without opening the tab: the system-wide client, or an error.
    const int tab = m_tabs->indexOf(m_boinc);
    const bool warn = !boinc.systemService.empty() || boinc.state == api::BoincState::Error;
    m_tabs->setTabIcon(tab, warn ? style()->standardIcon(QStyle::SP_MessageBoxWarning) : QIcon());
    m_tabs->setTabToolTip(tab, tr("BOINC: %1").arg(BoincModel::stateText(boinc)));
}

void MainWindow::onConnection(bool connected) {
    if (connected) {
        m_errorBar->hide();
    } else if (!m_daemon.isStarting() && !m_errorBar->isVisible()) {
        showError(tr("nicerd"),
                  tr("nicerd is not running, so no volunteer work is being done. Start it here, or with "
                     "`systemctl --user start nicerd`."));
    }
    m_pause->setEnabled(connected);
    m_preset->setEnabled(connected);
    m_parameters->setEnabled(connected);
    m_boinc->setConnected(connected);
    updateValues();
}

void MainWindow::onBus(bool present) {
    if (!present) {
        showError(tr("Session bus"), sessionBusGoneText());
        m_startDaemon->hide(); // nothing can be started without a bus
        m_showingBusError = true;
    } else if (m_showingBusError) {
        // What holds now is nicerd's state on the new bus, which the proxy reports next.
        m_errorBar->hide();
        m_showingBusError = false;
        updateStatus();
    }
}

void MainWindow::showError(const QString& context, const QString& message) {
    m_showingDaemonError = false;
    m_showingBusError = false;
    m_error->setText(QStringLiteral("<b>%1:</b> %2").arg(context.toHtmlEscaped(), message.toHtmlEscaped()));
    m_startDaemon->setVisible(!m_daemon.isConnected());
    m_errorBar->show();
    updateStatus();
}

void MainWindow::updateStatus() {
    const DaemonView view = m_daemon.view();
    const TrayState state = trayStateFor(view, m_daemon.isStarting());
    m_statusText = trayStatusText(state, view);
    m_status->setText(QStringLiteral("<b><font color=\"%1\">\u25cf</font> %2</b>")
                          .arg(stateColor(state).name(), m_statusText.toHtmlEscaped()));
}

void MainWindow::updateRules() {
    const auto& p = m_daemon.properties().state;
    const auto& sample = m_daemon.lastSample();
    if (sample && sample->temperature > api::kNoTemperature) {
        const QString now = tr("%1 \u00b0C").arg(qRound(sample->temperature));
        m_temperature->setText(
            p.temperatureTargetInUse > 0.0
                ? tr("%1, target %2 \u00b0C").arg(now).arg(qRound(p.temperatureTargetInUse))
                : now);
    } else {
        m_temperature->setText(p.temperatureSensor.empty() ? tr("no sensor") : tr("not read"));
    }
    // Why there is none, or which sensor it is.
    m_temperature->setToolTip(
        QString::fromStdString(p.sensorNote.empty() ? p.temperatureSensor : p.sensorNote));
    // The fans' row only where a fan reports its speed or the volunteer set a target for them.
    const control::Profile profile = control::profileFor(p.params, p.presence);
    m_values->setRowVisible(m_fans, p.fanSpeed >= 0.0 || profile.fanTarget > 0.0);
    if (p.fanSpeed >= 0.0) {
        const QString now = tr("%1 rpm").arg(qRound(p.fanSpeed));
        m_fans->setText(
            profile.fanTarget > 0.0 ? tr("%1, target %2 rpm").arg(now).arg(qRound(profile.fanTarget)) : now);
    } else {
        m_fans->setText(tr("not reported"));
    }
    QString power = p.powerSource.empty() ? tr("not known")
                    : p.onBattery
                        ? (p.batteryPercent >= 0.0 ? tr("on battery, %1 %").arg(qRound(p.batteryPercent))
                                                   : tr("on battery"))
                        : tr("on mains");
    if (p.powerSaver) {
        power += tr(", power saver");
    }
    // The sleep policy, where the volunteer chose one (keep-awake): whether nicer keeps the machine awake.
    QString powerTip = QString::fromStdString(p.powerSource.empty() ? p.powerNote : p.powerSource);
    if (p.params.keepAwake != 0) {
        power += p.keepingAwake ? tr(", kept awake") : tr(", may sleep");
        powerTip += QStringLiteral("\n") + tr("Sleep: %1").arg(QString::fromStdString(p.sleepNote));
    }
    m_power->setText(power);
    m_power->setToolTip(powerTip);
    updateMemory(p);
    const QString presenceReason = QString::fromStdString(p.presenceReason);
    switch (p.presence) {
    case control::Presence::Here:
        m_presence->setText(tr("here (%1)").arg(presenceReason));
        break;
    case control::Presence::Away:
        m_presence->setText(tr("away (%1)").arg(presenceReason));
        break;
    case control::Presence::Unknown:
        m_presence->setText(tr("not known"));
        break;
    }
    QString presenceTip = p.presence == control::Presence::Unknown
                              ? presenceReason
                              : tr("As %1 tells it").arg(QString::fromStdString(p.presenceSource));
    if (!p.inputTimeNote.empty()) {
        presenceTip += QStringLiteral("\n") + QString::fromStdString(p.inputTimeNote);
    }
    m_presence->setToolTip(presenceTip);
    // Why a rule cannot see what it needs: where the volunteer looks for it, in a quiet voice. Each note is
    // nicerd's sentence, "what: the details"; the line shows what (it fits beside the rows above) and the
    // tooltip the whole sentences. A row that already says "no sensor" or "not known" has its note as its
    // tooltip, and leaves the line to the others.
    const bool temperatureShown = sample && sample->temperature > api::kNoTemperature;
    QStringList notes;
    QStringList heads;
    for (const std::string* note : {temperatureShown ? &p.sensorNote : nullptr,
                                    p.powerSource.empty() ? nullptr : &p.powerNote, &p.gameNote}) {
        if (note != nullptr && !note->empty()) {
            const QString text = QString::fromStdString(*note);
            notes.append(text);
            heads.append(text.section(QStringLiteral(": "), 0, 0));
        }
    }
    m_ruleNotes->setText(heads.join(QLatin1Char('\n')));
    m_ruleNotes->setToolTip(notes.join(QLatin1Char('\n')));
    m_ruleNotes->setVisible(m_daemon.isConnected() && !notes.isEmpty());
}

void MainWindow::updateMemory(const api::DaemonState& p) {
    if (p.params.memoryStall <= 0.0 || p.memoryStallBeside < 0.0) {
        m_memory->setText(p.params.memoryStall <= 0.0 ? tr("no memory rule") : tr("not read"));
        m_memory->setToolTip(QString::fromStdString(p.memoryNote));
        return;
    }
    QString text =
        p.workMemory > 0
            ? tr("work %1").arg(QString::fromStdString(text::humanBytes(static_cast<double>(p.workMemory))))
            : tr("work's not read");
    text += tr(", others waited %1 %").arg(p.memoryStallBeside * 100.0, 0, 'f', 1);
    if (p.memoryHoldLimit > 0) {
        text += tr(", held to %1")
                    .arg(QString::fromStdString(text::humanBytes(static_cast<double>(p.memoryHoldLimit))));
    }
    if (p.instancesStopped > 0) {
        text += tr(", %n stopped", nullptr, static_cast<int>(p.instancesStopped));
    }
    m_memory->setText(text);
    QStringList tip;
    for (const std::string* part : {&p.memoryHoldReason, &p.memoryNote}) {
        if (!part->empty()) {
            tip.append(QString::fromStdString(*part));
        }
    }
    if (!p.memoryStallWhere.empty() && p.memoryStallBeside > 0.0) {
        tip.append(tr("Most waiting in %1").arg(QString::fromStdString(p.memoryStallWhere)));
    }
    m_memory->setToolTip(tip.join(QLatin1Char('\n')));
}

void MainWindow::updateValues() {
    updateStatus();
    const auto& sample = m_daemon.lastSample();
    if (m_daemon.isConnected()) {
        updateRules();
    } else {
        m_ruleNotes->hide();
    }
    if (!m_daemon.isConnected() || !sample) {
        // Without nicerd (or its bus) the last numbers no longer hold: show none rather than old ones.
        for (QLabel* value : {m_user, m_others, m_work, m_idle, m_reserve, m_cap, m_temperature, m_fans,
                              m_power, m_memory, m_presence, m_overloads}) {
            value->setText(QStringLiteral("-"));
        }
        return;
    }
    const auto& p = m_daemon.properties().state;
    const double kept = ChartPoint{*sample, p.params.reserveBand}.reserveKept();
    m_user->setText(percent(api::yourPrograms(sample->foreground, sample->outside)));
    m_others->setText(sample->outside >= 0.0 ? percent(sample->outside) : QStringLiteral("-"));
    m_work->setText(percent(sample->background));
    m_idle->setText(percent(sample->idle));
    m_reserve->setText(
        tr("%1 (%2 x %3)")
            .arg(percent(kept), QString::number(sample->multiplier, 'f', 1), percent(p.params.reserveBand)));
    m_cap->setText(sample->paused ? tr("paused") : percent(sample->quota));
    m_overloads->setText(tr("%1 of %2").arg(sample->overloadCount).arg(p.params.overloadThreshold));
}

} // namespace nicer::tray
