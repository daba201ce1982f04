#include "daemon/OwnUnit.h"

#include <systemd/sd-login.h>

#include <cstdint>
#include <cstdlib>
#include <unistd.h>
#include <vector>

namespace nicer::daemon {

Result<std::string> ownUnit(usermanager::UnitManager& units) {
    char* unit = nullptr;
    if (sd_pid_get_user_unit(0, &unit) >= 0 && unit) {
        const std::string name = unit;
        std::free(unit);
        if (name.ends_with(".service")) {
            if (auto pid = units.mainPid(name); pid && *pid == static_cast<std::uint32_t>(::getpid())) {
                return name;
            }
        }
    }
    const std::string scope = "nicerd-" + std::to_string(::getpid()) + ".scope";
    auto started = units.startTransientUnit(
        scope,
        {{"Description", std::string("nicer daemon (started outside its service)")},
         {"PIDs", std::vector<std::uint32_t>{static_cast<std::uint32_t>(::getpid())}},
         {"CollectMode", std::string("inactive-or-failed")}},
        true);
    if (!started) {
        return Error{"cannot give nicerd a scope of its own, which keeps the work from outliving it: " +
                     started.error().message + ". Start nicerd as the nicerd.service user unit instead."};
    }
    return scope;
}

} // namespace nicer::daemon
