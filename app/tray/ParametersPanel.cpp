#include "tray/ParametersPanel.h"

#include "control/ParameterTable.h"

#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QVBoxLayout>

#include <cmath>

namespace nicer::tray {

namespace {

constexpr int kSliderSteps = 1000;

// True when the controls' values are the daemon's as the controls would show them: a difference finer than
// a control's precision (half its last digit) is not an edit.
bool showsSameAs(const control::ControllerParams& shown, const control::ControllerParams& daemon) {
    for (const auto& info : control::parameterTable()) {
        const double halfStep = 0.5 * std::pow(10.0, -info.displayDecimals);
        if (!(std::abs(info.get(shown) - info.get(daemon)) * info.displayScale < halfStep)) {
            return false;
        }
    }
    return true;
}

} // namespace

ParametersPanel::ParametersPanel(QWidget* parent)
    : QGroupBox(tr("Controller"), parent) {
    auto* grid = new QGridLayout();
    grid->setColumnStretch(1, 1);
    setLayout(new QVBoxLayout());
    static_cast<QVBoxLayout*>(layout())->addLayout(grid);

    // One row per parameter of the controller's table, in its order, with its label, help, unit and range.
    for (const auto& info : control::parameterTable()) {
        addRow(info);
    }
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        const Row& r = m_rows[i];
        grid->addWidget(r.slider, static_cast<int>(i), 1);
        grid->addWidget(r.spin, static_cast<int>(i), 2);
    }

    m_problem = new QLabel(this);
    m_problem->setWordWrap(true);
    m_problem->setForegroundRole(QPalette::BrightText);
    m_problem->setStyleSheet("color: #d03b3b");
    m_problem->hide();
    layout()->addWidget(m_problem);

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
        if (control::validate(params)) {
            emit applyRequested(params);
        }
    });
    connect(m_revert, &QPushButton::clicked, this, [this] {
        m_pending = false;
        show(m_current);
    });
    connect(m_reset, &QPushButton::clicked, this, [this] {
        show(control::ControllerParams{});
        emit applyRequested(control::ControllerParams{});
    });
    show(m_current);
}

void ParametersPanel::addRow(const control::ParameterInfo& info) {
    const QString label = QString::fromUtf8(info.label);
    const QString help = QString::fromUtf8(info.help) + QLatin1Char('.');
    const double min = info.sliderMin, max = info.sliderMax;
    Row r;
    r.key = QString::fromUtf8(info.key);
    r.info = &info;
    r.slider = new QSlider(Qt::Horizontal, this);
    r.slider->setRange(0, kSliderSteps);
    r.spin = new QDoubleSpinBox(this);
    r.spin->setRange(min, max);
    r.spin->setSingleStep(info.displayStep);
    r.spin->setDecimals(info.displayDecimals);
    r.spin->setSuffix(QString::fromUtf8(info.displayUnit));
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
    auto* text = new QLabel(label, this);
    text->setBuddy(r.spin);
    text->setToolTip(help);
    auto* grid = static_cast<QGridLayout*>(static_cast<QVBoxLayout*>(layout())->itemAt(0)->layout());
    grid->addWidget(text, static_cast<int>(m_rows.size()), 0);

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
    m_rows.push_back(std::move(r));
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

control::ControllerParams ParametersPanel::editedParams() const {
    control::ControllerParams p;
    for (const Row& r : m_rows) {
        double value = r.spin->value() / r.info->displayScale;
        if (r.info->type == control::ParameterType::Count) {
            value = std::round(value);
        }
        (void)r.info->set(p, value); // the spin box's range holds only values that can be stored
    }
    return p;
}

void ParametersPanel::setParams(const control::ControllerParams& params) {
    m_current = params;
    if (!m_pending) {
        show(params);
    } else {
        edited();
    }
}

void ParametersPanel::show(const control::ControllerParams& p) {
    m_updating = true;
    for (const Row& r : m_rows) {
        r.spin->setValue(r.info->get(p) * r.info->displayScale);
        r.slider->setValue(r.toSlider(r.spin->value()));
    }
    m_updating = false;
    edited();
}

void ParametersPanel::edited() {
    const auto params = editedParams();
    m_pending = !showsSameAs(params, m_current);
    const auto valid = control::validate(params);
    m_problem->setVisible(!valid);
    if (!valid) {
        m_problem->setText(QString::fromStdString(valid.error().message));
    }
    m_apply->setEnabled(m_pending && valid.ok());
    m_revert->setEnabled(m_pending);
}

} // namespace nicer::tray
