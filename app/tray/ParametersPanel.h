#pragma once

#include "control/ControllerParams.h"

#include <QGroupBox>
#include <QStringList>

#include <functional>
#include <vector>

class QCheckBox;
class QDoubleSpinBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;

namespace nicer::control {
struct ParameterInfo;
}

namespace nicer::tray {

/**
 * Sliders, each paired with a spin box showing the value and its unit, for the controller's parameters; a
 * check box for a switch (a whole number that is 0 or 1). The controller's own parameters come first, the
 * volunteer's rules (the rows after "period") beside them under "Cool, quiet and charged", with the named
 * programs that pause the work (a line of executable names) and those of them running now. Edits are held
 * until Apply, then sent all at once (applyRequested; programsApplyRequested when the names changed);
 * "Reset to defaults" fills in the controller's defaults and applies them (not the names). Invalid
 * combinations (min multiplier above max) are shown and block Apply, using the same validation as nicerd;
 * nicerd alone judges the names.
 */
class ParametersPanel : public QGroupBox {
    Q_OBJECT

public:
    explicit ParametersPanel(QWidget* parent = nullptr);

    /// Shows nicerd's current values, unless the user has unapplied edits.
    void setParams(const control::ControllerParams& params);
    /// The values the controls show now.
    control::ControllerParams editedParams() const;
    bool hasPendingEdits() const { return m_paramsPending || programsPending(); }

    /// Shows nicerd's named programs (ExclusivePrograms) and those of them that run now (ProgramsRunning).
    /// The field keeps what the user typed while it differs from @p names and was not applied yet, or while
    /// the user is typing in it.
    void setPrograms(const QStringList& names, const QStringList& running);
    /// The names the field holds now.
    QStringList editedPrograms() const;
    /// The names in @p text: apart by spaces or commas, each once, in their order.
    static QStringList parsePrograms(const QString& text);
    QLineEdit* programsEdit() const { return m_programs; }
    /// "Running now: ...", hidden when none of the named programs runs.
    QLabel* programsRunningLabel() const { return m_running; }

    /// For tests: the slider and spin box of a parameter, by its nicer key ("reserve-band", ...); null for a
    /// switch, which has a check box instead.
    QSlider* slider(const QString& key) const;
    QDoubleSpinBox* spinBox(const QString& key) const;
    QCheckBox* checkBox(const QString& key) const;
    /// The text field of an hours-of-the-week parameter (compute-hours), or nullptr.
    QLineEdit* lineEdit(const QString& key) const;

    /// Whether a parameter is a switch, shown as a check box: a whole number that is 0 or 1.
    static bool isSwitch(const control::ParameterInfo& info);
    QPushButton* applyButton() const { return m_apply; }
    QPushButton* resetButton() const { return m_reset; }

signals:
    void applyRequested(const nicer::control::ControllerParams& params);
    /// Apply with other names in the field than nicerd's: the whole new list (empty: none).
    void programsApplyRequested(const QStringList& names);

private:
    struct Row {
        QString key;
        const control::ParameterInfo* info = nullptr;
        QSlider* slider = nullptr;
        QDoubleSpinBox* spin = nullptr;
        QCheckBox* check = nullptr; ///< instead of the slider and spin box, for a switch
        QLineEdit* text = nullptr;  ///< instead of them, for hours of the week
        // Slider positions are integers; these map between a position and the parameter's value.
        std::function<int(double)> toSlider;
        std::function<double(int)> fromSlider;
    };

    /// The row of @p info at @p line of @p grid, from @p column on.
    void addRow(const control::ParameterInfo& info, QGridLayout* grid, int line, int column);
    void addSwitch(Row& r, const QString& label, const QString& help);
    void addSlider(Row& r, const QString& label, const QString& help);
    void addText(Row& r, const QString& label, const QString& help);
    /// The first text row whose text cannot be read, and why; empty when all can.
    QString textProblem() const;
    /// The named programs' field and the running ones, from @p line of @p grid on, in @p column's block.
    void addPrograms(QGridLayout* grid, int line, int column);
    void addButtons();
    /// Shows nicerd's names in the field, as the user's edit no longer holds.
    void showPrograms();
    /// The field holds an edit of the names not yet applied.
    bool programsPending() const;
    void updateProgramsHelp();
    /// The value @p r shows, in the text unit.
    static double shownValue(const Row& r);
    void show(const control::ControllerParams& params);
    void edited();
    const Row* row(const QString& key) const;

    std::vector<Row> m_rows;
    QLabel* m_problem = nullptr;
    QPushButton* m_apply = nullptr;
    QPushButton* m_revert = nullptr;
    QPushButton* m_reset = nullptr;
    QLineEdit* m_programs = nullptr;
    QLabel* m_programsLabel = nullptr;
    QLabel* m_running = nullptr;
    control::ControllerParams m_current;
    QStringList m_currentPrograms; ///< nicerd's
    bool m_paramsPending = false;  ///< the sliders and boxes hold an edit
    bool m_programsEdited = false; ///< the user typed in the names' field since they were shown or applied
    bool m_updating = false;
};

} // namespace nicer::tray
