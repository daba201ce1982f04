// nicer-tray: shows how the CPU is shared between you and the volunteer work, and lets you tune or pause it.
#include "tray/ApplicationService.h"
#include "tray/DaemonProxy.h"
#include "tray/MainWindow.h"
#include "tray/SessionBus.h"
#include "tray/TrayIcon.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QLibraryInfo>
#include <QLocale>
#include <QSystemTrayIcon>
#include <QTranslator>

#include <cstdio>
#include <memory>

namespace {

void printLine(std::FILE* stream, const QString& line) {
    std::fputs(qPrintable(line + QLatin1Char('\n')), stream);
}

} // namespace

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
    const QCommandLineOption quit(
        "quit", QApplication::translate("main", "Quit the nicer-tray running in this session (nicerd keeps "
                                                "running), and start none."));
    cli.addOptions({show, noStart, quit});
    cli.process(app);

    // Its own connection, not Qt's default one: the tray outlives a restart of the session bus.
    nicer::tray::SessionBus bus;
    // One nicer-tray per session: a second launch brings the first one's window forward and leaves.
    nicer::tray::ApplicationService service(bus);
    const auto claim = service.claim();
    if (cli.isSet(quit)) {
        if (claim != nicer::tray::ApplicationService::Claim::AlreadyRunning) {
            return 0; // none runs (this one held the name for a moment only)
        }
        const QString error = service.quitRunning();
        if (!error.isEmpty()) {
            printLine(stderr, QStringLiteral("nicer-tray: ") + error);
        }
        return error.isEmpty() ? 0 : 1;
    }
    switch (claim) {
    case nicer::tray::ApplicationService::Claim::AlreadyRunning:
        if (const QString error = service.activateRunning(); !error.isEmpty()) {
            printLine(stderr, QStringLiteral("nicer-tray: ") + error);
            return 1;
        }
        printLine(stdout, QApplication::translate("main", "nicer-tray is already running: its window was "
                                                          "brought forward."));
        return 0;
    case nicer::tray::ApplicationService::Claim::NoBus:
        printLine(stderr, QApplication::translate("main", "nicer-tray: %1, so it cannot make sure it runs "
                                                          "only once; starting anyway.")
                              .arg(service.claimError()));
        break;
    case nicer::tray::ApplicationService::Claim::Primary:
        break;
    }

    nicer::tray::DaemonProxy daemon(bus);
    // Without a tray host the window is the whole program: closing it quits (nicerd keeps running).
    const bool hasTray = QSystemTrayIcon::isSystemTrayAvailable();
    QApplication::setQuitOnLastWindowClosed(!hasTray);
    nicer::tray::MainWindow window(daemon, !hasTray);
    std::unique_ptr<nicer::tray::TrayIcon> tray;
    if (hasTray) {
        tray = std::make_unique<nicer::tray::TrayIcon>(daemon, window);
        tray->show();
    }
    service.setWindow(&window);
    QObject::connect(&service, &nicer::tray::ApplicationService::nameTaken, &app, [&](const QString& why) {
        printLine(stderr, QStringLiteral("nicer-tray: ") +
                              QApplication::translate("main", "%1; this one quits, so that there is one "
                                                              "nicer-tray and one icon.")
                                  .arg(why));
        if (window.isVisible()) {
            // The user was looking at a window: the other tray shows its own.
            if (const QString error = service.activateRunning(); !error.isEmpty()) {
                printLine(stderr, QStringLiteral("nicer-tray: ") + error);
            }
        }
        QApplication::quit();
    });
    QObject::connect(&service, &nicer::tray::ApplicationService::quitRequested, &app, &QApplication::quit);
    if (!hasTray || cli.isSet(show)) {
        window.show();
    }
    daemon.start(!cli.isSet(noStart));
    return QApplication::exec();
}
