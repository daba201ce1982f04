#pragma once

#include "control/ControllerParams.h"

#include <QGroupBox>

#include <functional>
#include <vector>

class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;

namespace nicer::control {
struct ParameterInfo;
}

namespace nicer::tray {

/**
 * Sliders, each paired with a spin box showing the value and its unit, for the controller's parameters.
 * Edits are held until Apply, then sent all at once (applyRequested); "Reset to defaults" fills in the
 * controller's defaults and applies them. Invalid combinations (min multiplier above max) are shown and
 * block Apply, using the same validation as nicerd.
 */
class ParametersPanel : public QGroupBox {
    Q_OBJECT

public:
    explicit ParametersPanel(QWidget* parent = nullptr);

    /// Shows nicerd's current values, unless the user has unapplied edits.
    void setParams(const control::ControllerParams& params);
    /// The values the controls show now.
    control::ControllerParams editedParams() const;
    bool hasPendingEdits() const { return m_pending; }

    /// For tests: the slider and spin box of a parameter, by its nicer key ("reserve-band", ...).
    QSlider* slider(const QString& key) const;
    QDoubleSpinBox* spinBox(const QString& key) const;
    QPushButton* applyButton() const { return m_apply; }
    QPushButton* resetButton() const { return m_reset; }

signals:
    void applyRequested(const nicer::control::ControllerParams& params);

private:
    struct Row {
        QString key;
        const control::ParameterInfo* info = nullptr;
        QSlider* slider = nullptr;
        QDoubleSpinBox* spin = nullptr;
        // Slider positions are integers; these map between a position and the parameter's value.
        std::function<int(double)> toSlider;
        std::function<double(int)> fromSlider;
    };

    void addRow(const control::ParameterInfo& info);
    void show(const control::ControllerParams& params);
    void edited();
    const Row* row(const QString& key) const;

    std::vector<Row> m_rows;
    QLabel* m_problem = nullptr;
    QPushButton* m_apply = nullptr;
    QPushButton* m_revert = nullptr;
    QPushButton* m_reset = nullptr;
    control::ControllerParams m_current;
    bool m_pending = false;
    bool m_updating = false;
};

} // namespace nicer::tray
