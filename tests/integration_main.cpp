// Main of the integration tests: they talk to a real systemd user manager, which the CTest fixture
// "user manager" starts with tests/harness/user-manager.sh when none is running.
#include "CatchRunner.h"

#include <cstdlib>
#include <string>
#include <unistd.h>

int main(int argc, char** argv) {
    // Same defaults as the harness, for a shell that has no session environment (CI, ssh, root).
    const std::string runtime = "/run/user/" + std::to_string(::getuid());
    ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 0);
    ::setenv("DBUS_SESSION_BUS_ADDRESS",
             ("unix:path=" + std::string(std::getenv("XDG_RUNTIME_DIR")) + "/bus").c_str(), 0);
    return nicer::test::runCatch(argc, argv);
}
