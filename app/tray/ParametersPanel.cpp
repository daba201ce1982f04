#include "tray/ParametersPanel.h"

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
    auto near = [](double a, double b, double halfStep) { return std::abs(a - b) < halfStep; };
    return near(shown.reserveBand, daemon.reserveBand, 0.0005) &&
           near(shown.minMultiplier, daemon.minMultiplier, 0.05) &&
           near(shown.maxMultiplier, daemon.maxMultiplier, 0.05) &&
           shown.overloadThreshold == daemon.overloadThreshold &&
           near(shown.idleEpsilon, daemon.idleEpsilon, 0.0005) && shown.period == daemon.period;
}

} // namespace

ParametersPanel::ParametersPanel(QWidget* parent)
    : QGroupBox(tr("Controller"), parent) {
    auto* grid = new QGridLayout();
    grid->setColumnStretch(1, 1);
    setLayout(new QVBoxLayout());
    static_cast<QVBoxLayout*>(layout())->addLayout(grid);

    using namespace control::limits;
    addRow("reserve-band", tr("Reserve band"),
           tr("Idle share of the whole machine kept free for your programs, before the multiplier."), 0.5,
           100 * kReserveBandMax, 0.5, 1, tr(" %"), false);
    addRow("min-multiplier", tr("Min multiplier"),
           tr("The band is multiplied by at least this: the steady-state idle reserve is min x band."),
           kMultiplierMin, kMultiplierMax, 0.5, 1, tr(" x"), false);
    addRow("max-multiplier", tr("Max multiplier"),
           tr("How far the band may widen while your programs keep the CPU busy."), kMultiplierMin,
           kMultiplierMax, 0.5, 1, tr(" x"), false);
    addRow("overload-threshold", tr("Overload threshold"),
           tr("Periods in a row with no idle CPU before the work is stopped."), 0, 60, 1, 0, tr(" periods"),
           false);
    addRow("idle-epsilon", tr("No-idle threshold"),
           tr("An idle share at or below this counts as no idle at all."), 0, 49, 0.5, 1, tr(" %"), false);
    addRow("period", tr("Period"), tr("How often nicerd measures and adjusts."),
           static_cast<double>(kPeriodMin.count()), static_cast<double>(kPeriodMax.count()), 10, 0, tr(" ms"),
           true);
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

void ParametersPanel::addRow(const QString& key, const QString& label, const QString& help, double min,
                             double max, double step, int decimals, const QString& suffix, bool logarithmic) {
    Row r;
    r.key = key;
    r.slider = new QSlider(Qt::Horizontal, this);
    r.slider->setRange(0, kSliderSteps);
    r.spin = new QDoubleSpinBox(this);
    r.spin->setRange(min, max);
    r.spin->setSingleStep(step);
    r.spin->setDecimals(decimals);
    r.spin->setSuffix(suffix);
    r.spin->setKeyboardTracking(false);
    if (logarithmic) {
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
    p.reserveBand = spinBox("reserve-band")->value() / 100.0;
    p.minMultiplier = spinBox("min-multiplier")->value();
    p.maxMultiplier = spinBox("max-multiplier")->value();
    p.overloadThreshold = static_cast<int>(std::lround(spinBox("overload-threshold")->value()));
    p.idleEpsilon = spinBox("idle-epsilon")->value() / 100.0;
    p.period = std::chrono::milliseconds(std::lround(spinBox("period")->value()));
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
    auto set = [this](const QString& key, double v) {
        const Row* r = row(key);
        r->spin->setValue(v);
        r->slider->setValue(r->toSlider(r->spin->value()));
    };
    set("reserve-band", 100 * p.reserveBand);
    set("min-multiplier", p.minMultiplier);
    set("max-multiplier", p.maxMultiplier);
    set("overload-threshold", p.overloadThreshold);
    set("idle-epsilon", 100 * p.idleEpsilon);
    set("period", static_cast<double>(p.period.count()));
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
