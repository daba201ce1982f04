// Main of the tray's tests: a QApplication for the widgets, offscreen unless the caller chose a platform
// (tests/harness/xvfb-tray-host.sh runs some under Xvfb with a tray host, for the screenshot).
#include "CatchRunner.h"

#include <QApplication>

#include <cstdlib>
#include <string>
#include <unistd.h>

int main(int argc, char** argv) {
    ::setenv("QT_QPA_PLATFORM", "offscreen", 0);
    // Same session defaults as the harness, for a shell with no session environment (CI, ssh, root).
    const std::string runtime = "/run/user/" + std::to_string(::getuid());
    ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 0);
    ::setenv("DBUS_SESSION_BUS_ADDRESS",
             ("unix:path=" + std::string(std::getenv("XDG_RUNTIME_DIR")) + "/bus").c_str(), 0);
    QApplication app(argc, argv);
    return nicer::test::runCatch(argc, argv);
}
