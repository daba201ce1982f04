#include "tray/ParametersPanel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTest>
#include <catch2/catch.hpp>

using nicer::control::ControllerParams;
using nicer::tray::ParametersPanel;

namespace {

/// The panel's Revert button, found by its words.
QPushButton* revertButton(const ParametersPanel& panel) {
    for (auto* button : panel.findChildren<QPushButton*>()) {
        if (button->text() == "Revert") {
            return button;
        }
    }
    return nullptr;
}

} // namespace

Q_DECLARE_METATYPE(nicer::control::ControllerParams)

TEST_CASE("the panel shows nicerd's parameters with their units", "[tray]") {
    ParametersPanel panel;
    ControllerParams p;
    p.reserveBand = 0.08;
    p.maxMultiplier = 8;
    p.overloadThreshold = 6;
    p.period = std::chrono::milliseconds(250);
    panel.setParams(p);
    CHECK(panel.spinBox("reserve-band")->value() == Approx(8.0));
    CHECK(panel.spinBox("reserve-band")->suffix().contains("%"));
    CHECK(panel.spinBox("max-multiplier")->value() == Approx(8.0));
    CHECK(panel.spinBox("overload-threshold")->value() == Approx(6.0));
    CHECK(panel.spinBox("period")->value() == Approx(250.0));
    CHECK(panel.spinBox("period")->suffix().contains("ms"));
    CHECK(panel.editedParams() == p);
    CHECK_FALSE(panel.hasPendingEdits());
    CHECK_FALSE(panel.applyButton()->isEnabled());
}

TEST_CASE("moving a slider edits the value, and Apply sends every parameter at once", "[tray]") {
    ParametersPanel panel;
    panel.setParams(ControllerParams{});
    QSignalSpy applied(&panel, &ParametersPanel::applyRequested);

    QSlider* band = panel.slider("reserve-band");
    band->setValue(band->maximum() / 5); // about a fifth of (0.5 .. 50) %
    const double shown = panel.spinBox("reserve-band")->value();
    CHECK(shown == Approx(0.5 + 49.5 / 5).margin(0.1));
    CHECK(panel.hasPendingEdits());
    REQUIRE(panel.applyButton()->isEnabled());

    QTest::mouseClick(panel.applyButton(), Qt::LeftButton);
    REQUIRE(applied.count() == 1);
    const auto sent = applied.at(0).at(0).value<ControllerParams>();
    CHECK(sent.reserveBand == Approx(shown / 100));
    CHECK(sent.maxMultiplier == ControllerParams{}.maxMultiplier);
    CHECK(sent.period == ControllerParams{}.period);

    // nicerd answers with the applied values: nothing is pending any more.
    panel.setParams(sent);
    CHECK_FALSE(panel.hasPendingEdits());
}

TEST_CASE("the period slider is logarithmic over 10 ms .. 10 s", "[tray]") {
    ParametersPanel panel;
    QSlider* period = panel.slider("period");
    period->setValue(period->minimum());
    CHECK(panel.spinBox("period")->value() == Approx(10));
    period->setValue((period->minimum() + period->maximum()) / 2);
    CHECK(panel.spinBox("period")->value() == Approx(316).margin(2)); // sqrt(10 * 10000)
    period->setValue(period->maximum());
    CHECK(panel.spinBox("period")->value() == Approx(10000));
}

TEST_CASE("an invalid combination is explained and cannot be applied", "[tray]") {
    ParametersPanel panel;
    panel.setParams(ControllerParams{});
    panel.spinBox("min-multiplier")->setValue(20);
    panel.spinBox("max-multiplier")->setValue(10);
    CHECK_FALSE(panel.applyButton()->isEnabled());
    bool explained = false;
    for (auto* label : panel.findChildren<QLabel*>()) {
        explained = explained || (label->isVisibleTo(&panel) && label->text().contains("min-multiplier"));
    }
    CHECK(explained);
}

TEST_CASE("reset to defaults applies the controller's defaults", "[tray]") {
    ParametersPanel panel;
    ControllerParams p;
    p.reserveBand = 0.2;
    p.overloadThreshold = 9;
    panel.setParams(p);
    QSignalSpy applied(&panel, &ParametersPanel::applyRequested);
    QTest::mouseClick(panel.resetButton(), Qt::LeftButton);
    REQUIRE(applied.count() == 1);
    CHECK(applied.at(0).at(0).value<ControllerParams>() == ControllerParams{});
    CHECK(panel.spinBox("reserve-band")->value() == Approx(100 * ControllerParams{}.reserveBand));
}

TEST_CASE("a value from nicerd finer than a control shows is not an edit", "[tray]") {
    ParametersPanel panel;
    ControllerParams p;
    p.reserveBand = 0.0333; // shown as 3.3 %
    panel.setParams(p);
    CHECK_FALSE(panel.hasPendingEdits());
}

TEST_CASE("every control has an accessible name", "[tray]") {
    ParametersPanel panel;
    for (const char* key : {"reserve-band", "min-multiplier", "max-multiplier", "multiplier-decay",
                            "overload-threshold", "idle-epsilon", "period"}) {
        CHECK_FALSE(panel.slider(key)->accessibleName().isEmpty());
        CHECK_FALSE(panel.spinBox(key)->accessibleName().isEmpty());
    }
    CHECK_FALSE(panel.applyButton()->accessibleName().isEmpty());
    CHECK_FALSE(panel.resetButton()->accessibleName().isEmpty());
}

TEST_CASE("the rules' switches are check boxes that send 0 and 1", "[tray][rules]") {
    ParametersPanel panel;
    ControllerParams p;
    p.powerSaverIsBattery = 1;
    p.gamesPause = 0;
    panel.setParams(p);
    QSignalSpy applied(&panel, &ParametersPanel::applyRequested);
    for (const char* key : {"power-saver-is-battery", "games-pause"}) {
        INFO(key);
        REQUIRE(panel.checkBox(key) != nullptr);
        CHECK(panel.slider(key) == nullptr);
        CHECK(panel.spinBox(key) == nullptr);
        CHECK_FALSE(panel.checkBox(key)->text().isEmpty());
        CHECK_FALSE(panel.checkBox(key)->toolTip().isEmpty());
    }
    CHECK(panel.checkBox("power-saver-is-battery")->isChecked());
    CHECK_FALSE(panel.checkBox("games-pause")->isChecked());
    CHECK(panel.checkBox("reserve-band") == nullptr); // a slider's row
    CHECK_FALSE(panel.hasPendingEdits());

    panel.checkBox("power-saver-is-battery")->click();
    panel.checkBox("games-pause")->click();
    CHECK(panel.hasPendingEdits());
    REQUIRE(panel.applyButton()->isEnabled());
    QTest::mouseClick(panel.applyButton(), Qt::LeftButton);
    REQUIRE(applied.count() == 1);
    const auto sent = applied.at(0).at(0).value<ControllerParams>();
    CHECK(sent.powerSaverIsBattery == 0);
    CHECK(sent.gamesPause == 1);
    CHECK(sent.reserveBand == p.reserveBand);

    // nicerd's answer shows, and Revert goes back to it.
    panel.setParams(sent);
    CHECK_FALSE(panel.hasPendingEdits());
    panel.checkBox("games-pause")->click();
    CHECK(panel.hasPendingEdits());
    QPushButton* revert = revertButton(panel);
    REQUIRE(revert);
    QTest::mouseClick(revert, Qt::LeftButton);
    CHECK(panel.checkBox("games-pause")->isChecked());
    CHECK_FALSE(panel.hasPendingEdits());
}

TEST_CASE("a rule's 0 reads as what it means, and the rules have their own heading", "[tray][rules]") {
    ParametersPanel panel;
    panel.setParams(ControllerParams{}); // temperature-target 0, fan-target 0, battery-cap 0
    CHECK(panel.spinBox("temperature-target")->text() == "auto");
    CHECK(panel.spinBox("fan-target")->text() == "off");
    CHECK(panel.spinBox("battery-cap")->text() == "pause");
    CHECK(panel.spinBox("reserve-band")->specialValueText().isEmpty());
    panel.spinBox("temperature-target")->setValue(75);
    CHECK(panel.spinBox("temperature-target")->text().startsWith("75"));
    CHECK(panel.editedParams().temperatureTarget == Approx(75));
    bool heading = false;
    for (auto* label : panel.findChildren<QLabel*>()) {
        heading = heading || label->accessibleName() == "Cool, quiet and charged";
    }
    CHECK(heading);
}

TEST_CASE("the named programs: nicerd's list in the field, the running ones beside it", "[tray][rules]") {
    ParametersPanel panel;
    panel.setParams(ControllerParams{});
    QLineEdit* field = panel.programsEdit();
    REQUIRE(field != nullptr);
    CHECK(field->text().isEmpty());
    CHECK(field->placeholderText().contains("blender"));
    CHECK(field->toolTip().contains("resumes 60 s after")); // the resume delay in use
    CHECK_FALSE(panel.programsRunningLabel()->isVisibleTo(&panel));

    panel.setPrograms({"blender", "steam"}, {"steam"});
    CHECK(field->text() == "blender steam");
    CHECK(panel.programsRunningLabel()->isVisibleTo(&panel));
    CHECK(panel.programsRunningLabel()->text() == "Running now: steam");
    CHECK_FALSE(panel.hasPendingEdits());
    CHECK_FALSE(panel.applyButton()->isEnabled());

    // nicerd's list changed (nicer exclusive-programs): the field follows, nothing is pending.
    panel.setPrograms({"gimp"}, {});
    CHECK(field->text() == "gimp");
    CHECK_FALSE(panel.programsRunningLabel()->isVisibleTo(&panel));
    CHECK_FALSE(panel.hasPendingEdits());

    ControllerParams slower;
    slower.resumeDelay = 120;
    panel.setParams(slower);
    CHECK(field->toolTip().contains("resumes 120 s after"));
}

TEST_CASE("names apart by spaces or commas, each once", "[tray][rules]") {
    CHECK(ParametersPanel::parsePrograms("blender steam") == QStringList{"blender", "steam"});
    CHECK(ParametersPanel::parsePrograms(" blender,steam ,, gimp\tblender ") ==
          QStringList{"blender", "steam", "gimp"});
    CHECK(ParametersPanel::parsePrograms("  , ").isEmpty());
}

TEST_CASE("typed names go with Apply only when they changed, and nicerd's answer shows again",
          "[tray][rules]") {
    ParametersPanel panel;
    panel.setParams(ControllerParams{});
    panel.setPrograms({"blender"}, {});
    QSignalSpy params(&panel, &ParametersPanel::applyRequested);
    QSignalSpy programs(&panel, &ParametersPanel::programsApplyRequested);
    QLineEdit* field = panel.programsEdit();

    // The same names written otherwise are no edit.
    field->clear();
    QTest::keyClicks(field, "blender,");
    CHECK(panel.editedPrograms() == QStringList{"blender"});
    CHECK_FALSE(panel.hasPendingEdits());

    field->clear();
    QTest::keyClicks(field, "blender, steam  /usr/bin/gimp");
    CHECK(panel.hasPendingEdits());
    REQUIRE(panel.applyButton()->isEnabled());
    // A property update while the edit is not applied keeps it.
    panel.setPrograms({"blender"}, {"blender"});
    CHECK(field->text() == "blender, steam  /usr/bin/gimp");
    CHECK(panel.hasPendingEdits());

    QTest::mouseClick(panel.applyButton(), Qt::LeftButton);
    REQUIRE(programs.count() == 1);
    CHECK(programs.at(0).at(0).toStringList() == QStringList{"blender", "steam", "/usr/bin/gimp"});
    CHECK(params.count() == 0); // the sliders did not change
    CHECK_FALSE(panel.applyButton()->isEnabled());

    // nicerd refused (a path): its list comes again, and the field shows it.
    panel.setPrograms({"blender"}, {});
    CHECK(field->text() == "blender");
    CHECK_FALSE(panel.hasPendingEdits());

    // A slider and the names at once: both go, and Enter in the field applies as the button does.
    panel.spinBox("resume-delay")->setValue(90);
    field->clear();
    QTest::keyClicks(field, "steam");
    QTest::keyClick(field, Qt::Key_Return);
    REQUIRE(params.count() == 1);
    CHECK(params.at(0).at(0).value<ControllerParams>().resumeDelay == Approx(90));
    REQUIRE(programs.count() == 2);
    CHECK(programs.at(1).at(0).toStringList() == QStringList{"steam"});

    // An empty field is no program at all.
    panel.setPrograms({"steam"}, {});
    field->clear();
    QTest::keyClicks(field, " ");
    QTest::mouseClick(panel.applyButton(), Qt::LeftButton);
    REQUIRE(programs.count() == 3);
    CHECK(programs.at(2).at(0).toStringList().isEmpty());
}

TEST_CASE("Revert puts nicerd's names back, and the field is not overwritten while typed in",
          "[tray][rules]") {
    ParametersPanel panel;
    panel.setParams(ControllerParams{});
    panel.setPrograms({"blender"}, {});
    QLineEdit* field = panel.programsEdit();
    QTest::keyClicks(field, " krita");
    REQUIRE(panel.hasPendingEdits());
    QPushButton* revert = revertButton(panel);
    REQUIRE(revert);
    QTest::mouseClick(revert, Qt::LeftButton);
    CHECK(field->text() == "blender");
    CHECK_FALSE(panel.hasPendingEdits());

    // Typing, even back to nicerd's names: an update that brings those names leaves the text as typed.
    panel.setVisible(true); // (its show() is its own)
    panel.activateWindow();
    REQUIRE(QTest::qWaitForWindowActive(&panel));
    field->setFocus();
    REQUIRE(field->hasFocus());
    field->clear();
    QTest::keyClicks(field, "blender,");
    panel.setPrograms({"blender"}, {});
    CHECK(field->text() == "blender,");
    // Once the user is done with the field, the next update shows nicerd's names as nicerd writes them.
    field->clearFocus();
    panel.setPrograms({"blender"}, {});
    CHECK(field->text() == "blender");
}
