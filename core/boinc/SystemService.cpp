#include "boinc/SystemService.h"

#include <cstdlib>
#include <memory>
#include <system_error>
#include <utility>

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

namespace {

Result<std::string> unitProperty(sd_bus* bus, const char* path, const char* property) {
    libsystemd::BusError error;
    char* raw = nullptr;
    const int r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path,
                                             "org.freedesktop.systemd1.Unit", property, error.get(), &raw);
    const std::unique_ptr<char, decltype(&std::free)> value(raw, &std::free);
    if (r < 0) {
        return libsystemd::busError(
            std::string("the system manager's ") + property + " of " + kSystemServiceUnit, r, error);
    }
    return std::string(raw ? raw : "");
}

} // namespace

Result<SystemServiceState> querySystemService(sd_bus* systemBus) {
    char* rawPath = nullptr;
    if (const int r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", kSystemServiceUnit, &rawPath);
        r < 0) {
        return libsystemd::busError("the object path of " + std::string(kSystemServiceUnit), r);
    }
    const std::unique_ptr<char, decltype(&std::free)> path(rawPath, &std::free);
    // Asking for the unit's path loads it where systemd knows its file; a unit without one reads "not-found".
    auto load = unitProperty(systemBus, path.get(), "LoadState");
    if (!load) {
        return load.error();
    }
    if (*load == "not-found") {
        return SystemServiceState{};
    }
    auto active = unitProperty(systemBus, path.get(), "ActiveState");
    if (!active) {
        return active.error();
    }
    auto file = unitProperty(systemBus, path.get(), "UnitFileState");
    if (!file) {
        return file.error();
    }
    return SystemServiceState{std::move(*active), std::move(*file)};
}

std::string systemServiceAdvice(bool enabled, bool running) {
    const std::string unit = kSystemServiceUnit;
    if (!enabled && !running) {
        return {};
    }
    const std::string what = enabled && running ? "is enabled and running"
                             : enabled          ? "is enabled"
                                                : "is running (started by hand, not enabled)";
    return "the system-wide BOINC client (" + unit + ") " + what +
           ": it runs as the user boinc, outside nicer's control, and competes with your programs and with "
           "the "
           "work nicer governs. To hand BOINC to nicer, run: sudo systemctl " +
           (enabled ? "disable --now " : "stop ") + unit +
           " (then attach your projects with `nicer boinc attach`)";
}

SystemServiceProbe::SystemServiceProbe(fs::path root)
    : m_root(std::move(root)) {}

std::string SystemServiceProbe::advice() {
    if (m_bus && sd_bus_is_open(m_bus.get()) <= 0) {
        m_bus.reset(); // the system bus restarted: connect again
    }
    if (!m_bus) {
        sd_bus* raw = nullptr;
        if (sd_bus_open_system(&raw) >= 0) {
            m_bus.reset(raw);
            sd_bus_set_method_call_timeout(m_bus.get(), 1'000'000);
        } else {
            sd_bus_unref(raw);
        }
    }
    const bool linked = systemServiceEnabled(m_root);
    if (m_bus) {
        if (auto state = querySystemService(m_bus.get())) {
            m_usedBus = true;
            const bool enabled = linked || state->unitFileState == "enabled";
            const bool running = state->activeState == "active" || state->activeState == "activating" ||
                                 state->activeState == "reloading";
            return systemServiceAdvice(enabled, running);
        }
    }
    m_usedBus = false;
    return systemServiceAdvice(linked, false);
}

} // namespace nicer::boinc
