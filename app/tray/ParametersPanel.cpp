#include "tray/ParametersPanel.h"

#include "control/ParameterTable.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSlider>
#include <QVBoxLayout>

#include <cmath>
#include <string_view>

namespace nicer::tray {

namespace {

constexpr int kSliderSteps = 1000;

/// What a rule's 0 means, in the spin box's place: the table's help says it in a sentence.
QString zeroText(const QString& key) {
    if (key == QLatin1String("temperature-target") || key == QLatin1String("away-temperature-target")) {
        return ParametersPanel::tr("auto");
    }
    if (key == QLatin1String("fan-target") || key == QLatin1String("away-fan-target")) {
        return ParametersPanel::tr("off");
    }
    if (key == QLatin1String("battery-cap")) {
        return ParametersPanel::tr("pause");
    }
    if (key == QLatin1String("max-instances") || key == QLatin1String("away-max-instances")) {
        return ParametersPanel::tr("all");
    }
    return {};
}

// True when the controls' values are the daemon's as the controls would show them: a difference finer than
// a control's precision (half its last digit) is not an edit.
bool showsSameAs(const control::ControllerParams& shown, const control::ControllerParams& daemon) {
    for (const auto& info : control::parameterTable()) {
        if (info.type == control::ParameterType::Hours) {
            if (!control::sameValue(info, shown, daemon)) {
                return false;
            }
            continue;
        }
        const double halfStep = 0.5 * std::pow(10.0, -info.displayDecimals);
        if (!(std::abs(info.get(shown) - info.get(daemon)) * info.displayScale < halfStep)) {
            return false;
        }
    }
    return true;
}

} // namespace

ParametersPanel::ParametersPanel(QWidget* parent)
    : QGroupBox(tr("Settings"), parent) {
    auto* grid = new QGridLayout();
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(5, 1);
    grid->setColumnMinimumWidth(3, 18);
    setLayout(new QVBoxLayout());
    static_cast<QVBoxLayout*>(layout())->addLayout(grid);

    // One row per parameter of the controller's table, in its order, with its label, help, unit and range:
    // the controller's own on the left, the two profiles under them, the volunteer's other rules on the
    // right (ParameterInfo::group).
    const auto heading = [this](const QString& text) {
        auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(text.toHtmlEscaped()), this);
        label->setAccessibleName(text);
        return label;
    };
    grid->addWidget(heading(tr("Controller")), 0, 0, 1, 3);
    grid->addWidget(heading(tr("Cool, quiet and charged")), 0, 4, 1, 3);
    int leftLine = 1;
    int rightLine = 1;
    for (const auto& info : control::parameterTable()) {
        if (info.group == control::ParameterGroup::Controller) {
            addRow(info, grid, leftLine++, 0);
        } else if (info.group == control::ParameterGroup::Rules) {
            addRow(info, grid, rightLine++, 4);
        }
    }
    grid->addWidget(heading(tr("Here or away")), leftLine++, 0, 1, 3);
    for (const auto& info : control::parameterTable()) {
        if (info.group == control::ParameterGroup::Profiles) {
            addRow(info, grid, leftLine++, 0);
        }
    }
    addPrograms(grid, rightLine, 4);
    rightLine += 2;
    grid->addWidget(heading(tr("Schedule")), rightLine++, 4, 1, 3);
    for (const auto& info : control::parameterTable()) {
        if (info.group == control::ParameterGroup::Schedule) {
            addRow(info, grid, rightLine++, 4);
        }
    }

    m_problem = new QLabel(this);
    m_problem->setWordWrap(true);
    m_problem->setForegroundRole(QPalette::BrightText);
    m_problem->setStyleSheet("color: #d03b3b");
    m_problem->hide();
    layout()->addWidget(m_problem);
    addButtons();
    show(m_current);
}

void ParametersPanel::addPrograms(QGridLayout* grid, int line, int column) {
    m_programs = new QLineEdit(this);
    m_programs->setPlaceholderText(tr("e.g. blender steam"));
    m_programs->setAccessibleName(tr("Programs that pause the work"));
    m_programs->setClearButtonEnabled(true);
    m_programsLabel = new QLabel(tr("Programs that pause the work"), this);
    m_programsLabel->setBuddy(m_programs);
    m_running = new QLabel(this);
    m_running->setAccessibleName(tr("Named programs running now"));
    m_running->setWordWrap(true);
    m_running->hide();
    updateProgramsHelp();
    grid->addWidget(m_programsLabel, line, column);
    grid->addWidget(m_programs, line, column + 1, 1, 2);
    grid->addWidget(m_running, line + 1, column + 1, 1, 2);

    // Only the user's typing is an edit: the text nicerd's list puts there is not.
    connect(m_programs, &QLineEdit::textEdited, this, [this] {
        m_programsEdited = true;
        edited();
    });
    // Enter applies, as the Apply button would.
    connect(m_programs, &QLineEdit::returnPressed, this, [this] {
        if (m_apply->isEnabled()) {
            m_apply->click();
        }
    });
}

void ParametersPanel::updateProgramsHelp() {
    const QString help =
        tr("The programs that pause the volunteer work while any of them runs, as BOINC's exclusive "
           "applications: each by the file name of its executable (blender, not /usr/bin/blender), apart by "
           "spaces or commas; empty for none. The work resumes %1 s after the last one ends (Resume delay). "
           "nicerd keeps the list across restarts.")
            .arg(std::lround(m_current.resumeDelay));
    for (QWidget* w : {static_cast<QWidget*>(m_programs), static_cast<QWidget*>(m_programsLabel)}) {
        w->setToolTip(help);
    }
    m_programs->setAccessibleDescription(help);
}

QStringList ParametersPanel::parsePrograms(const QString& text) {
    static const QRegularExpression apart(QStringLiteral("[\\s,]+"));
    QStringList names = text.split(apart, Qt::SkipEmptyParts);
    names.removeDuplicates();
    return names;
}

QStringList ParametersPanel::editedPrograms() const {
    return parsePrograms(m_programs->text());
}

bool ParametersPanel::programsPending() const {
    return m_programsEdited && editedPrograms() != m_currentPrograms;
}

void ParametersPanel::setPrograms(const QStringList& names, const QStringList& running) {
    m_currentPrograms = names;
    m_running->setText(tr("Running now: %1").arg(running.join(QLatin1Char(' '))));
    m_running->setVisible(!running.isEmpty());
    const bool typing = m_programs->hasFocus() && m_programs->isModified();
    if (!typing && !programsPending()) {
        showPrograms();
    }
    edited();
}

void ParametersPanel::showPrograms() {
    m_programsEdited = false;
    if (m_programs->text() != m_currentPrograms.join(QLatin1Char(' '))) {
        m_programs->setText(m_currentPrograms.join(QLatin1Char(' ')));
    }
    m_programs->setModified(false);
}

void ParametersPanel::addButtons() {
    auto* buttons = new QHBoxLayout();
    m_reset = new QPushButton(tr("Reset to defaults"), this);
    m_reset->setAccessibleName(tr("Reset the controller settings to their defaults"));
    m_revert = new QPushButton(tr("Revert"), this);
    m_revert->setAccessibleName(tr("Discard unapplied changes"));
    m_apply = new QPushButton(tr("Apply"), this);
    m_apply->setAccessibleName(tr("Apply the controller settings"));
    m_apply->setDefault(true);
    buttons->addWidget(m_reset);
    buttons->addStretch();
    buttons->addWidget(m_revert);
    buttons->addWidget(m_apply);
    static_cast<QVBoxLayout*>(layout())->addLayout(buttons);

    connect(m_apply, &QPushButton::clicked, this, [this] {
        const auto params = editedParams();
        if (!control::validate(params) || !textProblem().isEmpty()) {
            return;
        }
        const bool sendParams = m_paramsPending;
        const bool sendPrograms = programsPending();
        const QStringList names = editedPrograms();
        // Handed to nicerd: its answer (the announced list, or the list again after a refusal) shows next.
        m_programsEdited = false;
        m_programs->setModified(false);
        if (sendParams) {
            emit applyRequested(params);
        }
        if (sendPrograms) {
            emit programsApplyRequested(names);
        }
        edited();
    });
    connect(m_revert, &QPushButton::clicked, this, [this] {
        m_paramsPending = false;
        showPrograms();
        show(m_current);
    });
    connect(m_reset, &QPushButton::clicked, this, [this] {
        show(control::ControllerParams{});
        emit applyRequested(control::ControllerParams{});
    });
}

bool ParametersPanel::isSwitch(const control::ParameterInfo& info) {
    return info.type == control::ParameterType::Count && info.min == 0.0 && info.max == 1.0;
}

void ParametersPanel::addRow(const control::ParameterInfo& info, QGridLayout* grid, int line, int column) {
    const QString label = QString::fromUtf8(info.label);
    const QString help = QString::fromUtf8(info.help) + QLatin1Char('.');
    Row r;
    r.key = QString::fromUtf8(info.key);
    r.info = &info;
    if (isSwitch(info)) {
        addSwitch(r, label, help);
        grid->addWidget(r.check, line, column, 1, 3);
    } else if (info.type == control::ParameterType::Hours) {
        addText(r, label, help);
        auto* text = new QLabel(label, this);
        text->setBuddy(r.text);
        text->setToolTip(help);
        grid->addWidget(text, line, column);
        grid->addWidget(r.text, line, column + 1, 1, 2);
    } else {
        addSlider(r, label, help);
        auto* text = new QLabel(label, this);
        text->setBuddy(r.spin);
        text->setToolTip(help);
        grid->addWidget(text, line, column);
        grid->addWidget(r.slider, line, column + 1);
        grid->addWidget(r.spin, line, column + 2);
    }
    m_rows.push_back(std::move(r));
}

void ParametersPanel::addSwitch(Row& r, const QString& label, const QString& help) {
    r.check = new QCheckBox(label, this);
    r.check->setAccessibleDescription(help);
    r.check->setToolTip(help);
    connect(r.check, &QCheckBox::toggled, this, [this] {
        if (!m_updating) {
            edited();
        }
    });
}

void ParametersPanel::addText(Row& r, const QString& label, const QString& help) {
    r.text = new QLineEdit(this);
    r.text->setPlaceholderText(tr("any, or e.g. mon-fri 18:00-08:00; sat,sun any"));
    r.text->setAccessibleName(label);
    r.text->setAccessibleDescription(help);
    r.text->setToolTip(help);
    r.text->setClearButtonEnabled(true);
    connect(r.text, &QLineEdit::textEdited, this, [this] {
        if (!m_updating) {
            edited();
        }
    });
    connect(r.text, &QLineEdit::returnPressed, this, [this] {
        if (m_apply->isEnabled()) {
            m_apply->click();
        }
    });
}

QString ParametersPanel::textProblem() const {
    for (const Row& r : m_rows) {
        if (r.text) {
            if (auto hours = control::WeeklyHours::parse(r.text->text().toStdString()); !hours) {
                return QString::fromUtf8(r.info->label) + QStringLiteral(": ") +
                       QString::fromStdString(hours.error().message);
            }
        }
    }
    return {};
}

void ParametersPanel::addSlider(Row& r, const QString& label, const QString& help) {
    const control::ParameterInfo& info = *r.info;
    const double min = info.sliderMin, max = info.sliderMax;
    r.slider = new QSlider(Qt::Horizontal, this);
    r.slider->setRange(0, kSliderSteps);
    r.spin = new QDoubleSpinBox(this);
    r.spin->setRange(min, max);
    r.spin->setSingleStep(info.displayStep);
    r.spin->setDecimals(info.displayDecimals);
    r.spin->setSuffix(QString::fromUtf8(info.displayUnit));
    r.spin->setSpecialValueText(zeroText(r.key)); // shown at the minimum, 0 for these
    r.spin->setKeyboardTracking(false);
    if (info.logarithmic) {
        const double lmin = std::log(min), lmax = std::log(max);
        r.toSlider = [=](double v) {
            return static_cast<int>(std::lround((std::log(v) - lmin) / (lmax - lmin) * kSliderSteps));
        };
        r.fromSlider = [=](int pos) { return std::exp(lmin + (lmax - lmin) * pos / kSliderSteps); };
    } else {
        r.toSlider = [=](double v) {
            return static_cast<int>(std::lround((v - min) / (max - min) * kSliderSteps));
        };
        r.fromSlider = [=](int pos) { return min + (max - min) * pos / kSliderSteps; };
    }
    for (QWidget* w : {static_cast<QWidget*>(r.slider), static_cast<QWidget*>(r.spin)}) {
        w->setAccessibleName(label);
        w->setAccessibleDescription(help);
        w->setToolTip(help);
    }

    const std::size_t index = m_rows.size();
    connect(r.slider, &QSlider::valueChanged, this, [this, index](int pos) {
        if (m_updating) {
            return;
        }
        const Row& row = m_rows[index];
        // Snap to the spin box's precision so the two always agree.
        const double precision = std::pow(10.0, -row.spin->decimals());
        m_updating = true;
        row.spin->setValue(std::round(row.fromSlider(pos) / precision) * precision);
        m_updating = false;
        edited();
    });
    connect(r.spin, &QDoubleSpinBox::valueChanged, this, [this, index](double v) {
        if (m_updating) {
            return;
        }
        const Row& row = m_rows[index];
        m_updating = true;
        row.slider->setValue(row.toSlider(v));
        m_updating = false;
        edited();
    });
}

const ParametersPanel::Row* ParametersPanel::row(const QString& key) const {
    for (const Row& r : m_rows) {
        if (r.key == key) {
            return &r;
        }
    }
    return nullptr;
}

QSlider* ParametersPanel::slider(const QString& key) const {
    const Row* r = row(key);
    return r ? r->slider : nullptr;
}

QDoubleSpinBox* ParametersPanel::spinBox(const QString& key) const {
    const Row* r = row(key);
    return r ? r->spin : nullptr;
}

QCheckBox* ParametersPanel::checkBox(const QString& key) const {
    const Row* r = row(key);
    return r ? r->check : nullptr;
}

QLineEdit* ParametersPanel::lineEdit(const QString& key) const {
    const Row* r = row(key);
    return r ? r->text : nullptr;
}

double ParametersPanel::shownValue(const Row& r) {
    if (r.check) {
        return r.check->isChecked() ? 1.0 : 0.0;
    }
    return r.spin->value() / r.info->displayScale;
}

control::ControllerParams ParametersPanel::editedParams() const {
    control::ControllerParams p;
    for (const Row& r : m_rows) {
        if (r.text) {
            // Text that cannot be read keeps the default here; textProblem() says why, and Apply waits.
            (void)r.info->setText(p, r.text->text().toStdString());
            continue;
        }
        double value = shownValue(r);
        if (r.info->type == control::ParameterType::Count) {
            value = std::round(value);
        }
        (void)r.info->set(p, value); // the spin box's range holds only values that can be stored
    }
    return p;
}

void ParametersPanel::setParams(const control::ControllerParams& params) {
    m_current = params;
    updateProgramsHelp();
    if (!m_paramsPending) {
        show(params);
    } else {
        edited();
    }
}

void ParametersPanel::show(const control::ControllerParams& p) {
    m_updating = true;
    for (const Row& r : m_rows) {
        if (r.check) {
            r.check->setChecked(r.info->get(p) != 0.0);
            continue;
        }
        if (r.text) {
            r.text->setText(QString::fromStdString(r.info->getText(p)));
            continue;
        }
        r.spin->setValue(r.info->get(p) * r.info->displayScale);
        r.slider->setValue(r.toSlider(r.spin->value()));
    }
    m_updating = false;
    edited();
}

void ParametersPanel::edited() {
    const auto params = editedParams();
    const QString unreadable = textProblem();
    m_paramsPending = !showsSameAs(params, m_current) || !unreadable.isEmpty();
    const auto valid = control::validate(params);
    const QString problem = !unreadable.isEmpty() ? unreadable
                            : valid               ? QString()
                                                  : QString::fromStdString(valid.error().message);
    m_problem->setVisible(!problem.isEmpty());
    m_problem->setText(problem);
    m_apply->setEnabled(hasPendingEdits() && problem.isEmpty());
    m_revert->setEnabled(hasPendingEdits());
}

} // namespace nicer::tray
