#include "tray/Autostart.h"
#include "tray/TrayTestSupport.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <catch2/catch.hpp>

using nicer::tray::Autostart;
using nicer::tray::test::createEmptyFile;

TEST_CASE("start at login writes a valid autostart entry and removes it", "[tray][autostart]") {
    QTemporaryDir home;
    REQUIRE(home.isValid());
    Autostart autostart(home.filePath("config/autostart")); // the folder does not exist yet
    CHECK_FALSE(autostart.isEnabled());
    CHECK(autostart.isSupported());

    const auto enabled = autostart.setEnabled(true);
    INFO((enabled ? std::string() : enabled.error().message));
    REQUIRE(enabled.ok());
    CHECK(autostart.isEnabled());
    CHECK(autostart.entryPath() == home.filePath("config/autostart/org.nicer.Tray.desktop"));
    QFile file(autostart.entryPath());
    REQUIRE(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    CHECK(text.startsWith("[Desktop Entry]\n"));
    CHECK(text.contains("\nType=Application\n"));
    CHECK(text.contains("\nName=nicer\n"));
    CHECK(text.contains("\nExec=nicer-tray\n")); // in the tray: no --show
    CHECK(text.contains("\nIcon=org.nicer.Tray\n"));
    CHECK(text.contains("\nX-GNOME-Autostart-enabled=true\n"));

    const QString validator = QStandardPaths::findExecutable("desktop-file-validate");
    INFO("desktop-file-validate is missing: install desktop-file-utils (packaging/dev.sh does)");
    REQUIRE_FALSE(validator.isEmpty());
    QProcess validate;
    validate.start(validator, {autostart.entryPath()});
    REQUIRE(validate.waitForFinished());
    INFO(validate.readAllStandardOutput().toStdString() << validate.readAllStandardError().toStdString());
    CHECK(validate.exitStatus() == QProcess::NormalExit);
    CHECK(validate.exitCode() == 0);

    REQUIRE(autostart.setEnabled(true).ok()); // again: replaced, still one file
    CHECK(QDir(home.filePath("config/autostart")).entryList(QDir::Files | QDir::Hidden).size() == 1);

    REQUIRE(autostart.setEnabled(false).ok());
    CHECK_FALSE(autostart.isEnabled());
    CHECK_FALSE(QFile::exists(autostart.entryPath()));
    CHECK(autostart.setEnabled(false).ok()); // nothing to remove is no failure
}

TEST_CASE("start at login says what failed when the entry cannot be written", "[tray][autostart]") {
    QTemporaryDir home;
    REQUIRE(home.isValid());
    // A file where the folder should be: fails for root too, unlike a read-only folder.
    createEmptyFile(home.filePath("config"));
    Autostart autostart(home.filePath("config/autostart"));
    const auto enabled = autostart.setEnabled(true);
    REQUIRE_FALSE(enabled.ok());
    const QString message = QString::fromStdString(enabled.error().message);
    CHECK(message.contains(home.filePath("config/autostart")));
    CHECK(message.contains("cannot start at login"));
    CHECK_FALSE(autostart.isEnabled());
}

TEST_CASE("start at login is not offered inside a flatpak", "[tray][autostart]") {
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    Autostart autostart(dir.filePath("autostart"));
    CHECK(autostart.unsupportedReason().isEmpty());
    createEmptyFile(dir.filePath("flatpak-info"));
    autostart.setSandboxMarker(dir.filePath("flatpak-info"));
    CHECK_FALSE(autostart.isSupported());
    CHECK(autostart.unsupportedReason().contains("flatpak"));
}
