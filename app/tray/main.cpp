// nicer-tray: shows how the CPU is shared between you and the volunteer work, and lets you tune or pause it.
#include "tray/DaemonProxy.h"
#include "tray/MainWindow.h"
#include "tray/TrayIcon.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDBusConnection>
#include <QLibraryInfo>
#include <QLocale>
#include <QSystemTrayIcon>
#include <QTranslator>

#include <memory>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("nicer-tray");
    QApplication::setApplicationVersion(NICER_VERSION);
    QApplication::setDesktopFileName("org.nicer.Tray");

    QTranslator qtTranslator, translator;
    if (qtTranslator.load(QLocale(), "qtbase", "_", QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QApplication::installTranslator(&qtTranslator);
    }
    if (translator.load(QLocale(), "nicer-tray", "_", NICER_TRANSLATIONS_DIR)) {
        QApplication::installTranslator(&translator);
    }

    QCommandLineParser cli;
    cli.setApplicationDescription(QApplication::translate(
        "main", "Shows how the CPU is shared between you and the volunteer work that nicerd runs."));
    cli.addHelpOption();
    cli.addVersionOption();
    const QCommandLineOption show("show", QApplication::translate("main", "Open the window at start."));
    const QCommandLineOption noStart(
        "no-start", QApplication::translate("main", "Do not start nicerd if it is not running."));
    cli.addOptions({show, noStart});
    cli.process(app);

    nicer::tray::DaemonProxy daemon(QDBusConnection::sessionBus());
    // Without a tray host the window is the whole program: closing it quits (nicerd keeps running).
    const bool hasTray = QSystemTrayIcon::isSystemTrayAvailable();
    QApplication::setQuitOnLastWindowClosed(!hasTray);
    nicer::tray::MainWindow window(daemon, !hasTray);
    std::unique_ptr<nicer::tray::TrayIcon> tray;
    if (hasTray) {
        tray = std::make_unique<nicer::tray::TrayIcon>(daemon, window);
        tray->show();
    }
    if (!hasTray || cli.isSet(show)) {
        window.show();
    }
    daemon.start(!cli.isSet(noStart));
    return QApplication::exec();
}
