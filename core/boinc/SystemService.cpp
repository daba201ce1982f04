#include "boinc/SystemService.h"

#include <system_error>

namespace nicer::boinc {

namespace fs = std::filesystem;

bool systemServiceEnabled(const fs::path& root) {
    std::error_code ec;
    const auto units = root / "etc/systemd/system";
    for (fs::directory_iterator it(units, ec), end; !ec && it != end; it.increment(ec)) {
        const auto& name = it->path().filename().string();
        if (name.ends_with(".wants") && fs::exists(it->path() / kSystemServiceUnit, ec)) {
            return true;
        }
    }
    return false;
}

std::string systemServiceAdvice() {
    return std::string("the system-wide BOINC client (") + kSystemServiceUnit +
           ") is enabled: it runs as the user boinc, outside nicer's control, and competes with your "
           "programs "
           "and with the work nicer governs. To hand BOINC to nicer, run: sudo systemctl disable --now " +
           kSystemServiceUnit + " (then attach your projects with `nicer boinc attach`)";
}

} // namespace nicer::boinc
