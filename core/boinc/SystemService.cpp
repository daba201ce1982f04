#include "boinc/SystemService.h"

#include "libsystemd/Message.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
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

Result<SystemServiceState> readSystemServiceState(sd_bus_message* reply) {
    std::string load;
    SystemServiceState state;
    libsystemd::MessageReader in(reply);
    in.enter('a', "{sv}");
    while (in.enter('e', "sv")) {
        const char* name = nullptr;
        in.read("s", &name);
        const std::string_view key = name != nullptr ? name : "";
        std::string* field = key == "LoadState"       ? &load
                             : key == "ActiveState"   ? &state.activeState
                             : key == "UnitFileState" ? &state.unitFileState
                                                      : nullptr;
        const char* value = nullptr;
        if (field == nullptr) {
            in.skip("v");
        } else if (in.read("v", "s", &value)) {
            *field = value;
        }
        in.exit();
    }
    if (!in.ok()) {
        return libsystemd::busError(std::string("the system manager's answer about ") + kSystemServiceUnit,
                                    in.result());
    }
    // Asking for the unit's object loads it where systemd knows its file; a unit without one is "not-found".
    if (load == "not-found") {
        return SystemServiceState{};
    }
    return state;
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

namespace {

/// How long the system manager has to answer a look; past it, the file check answers.
constexpr std::uint64_t kLookTimeoutUsec = 1'000'000;

} // namespace

SystemServiceProbe::SystemServiceProbe(sd_event* event, fs::path root)
    : m_bus(event, libsystemd::BusTarget::system())
    , m_root(std::move(root)) {}

SystemServiceProbe::~SystemServiceProbe() = default;

void SystemServiceProbe::look(Done done) {
    if (m_call) {
        return; // the last look has not been answered yet
    }
    m_done = std::move(done);
    if (!m_bus.isOpen()) {
        // The first look, or the system bus restarted: connect (again). Without one, the file check answers.
        (void)m_bus.connect();
    }
    if (auto asked = m_bus.bus() != nullptr ? ask() : Error{libsystemd::busErrorText(-ENOTCONN, nullptr)};
        !asked) {
        finish(asked.error().within("cannot ask the system manager: "));
    }
}

Result<void> SystemServiceProbe::ask() {
    char* rawPath = nullptr;
    if (int r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", kSystemServiceUnit, &rawPath); r < 0) {
        return Error{libsystemd::busErrorText(r, nullptr)};
    }
    const std::unique_ptr<char, decltype(&std::free)> path(rawPath, &std::free);
    sd_bus_message* raw = nullptr;
    if (int r = sd_bus_message_new_method_call(m_bus.bus(), &raw, "org.freedesktop.systemd1", path.get(),
                                               "org.freedesktop.DBus.Properties", "GetAll");
        r < 0) {
        return Error{libsystemd::busErrorText(r, nullptr)};
    }
    const libsystemd::BusMessagePtr call(raw);
    libsystemd::MessageWriter out(call.get());
    if (!out.append("s", "org.freedesktop.systemd1.Unit").ok()) {
        return Error{libsystemd::busErrorText(out.result(), nullptr)};
    }
    auto made = m_bus.callAsync(
        call.get(), [this](sd_bus_message* reply) { onReply(reply); }, kLookTimeoutUsec);
    if (!made) {
        return made.error();
    }
    m_call = std::move(*made);
    return {};
}

void SystemServiceProbe::onReply(sd_bus_message* reply) {
    const sd_bus_error* error = sd_bus_message_get_error(reply);
    m_call.reset();
    finish(error != nullptr ? Result<SystemServiceState>(libsystemd::busError(
                                  "the system manager did not answer", -sd_bus_error_get_errno(error)))
                            : readSystemServiceState(reply));
}

void SystemServiceProbe::finish(const Result<SystemServiceState>& state) {
    const bool linked = systemServiceEnabled(m_root);
    m_usedBus = state.ok();
    std::string advice = systemServiceAdvice(linked, false);
    if (state) {
        const bool enabled = linked || state->unitFileState == "enabled";
        const bool running = state->activeState == "active" || state->activeState == "activating" ||
                             state->activeState == "reloading";
        advice = systemServiceAdvice(enabled, running);
    }
    if (auto done = std::move(m_done)) {
        done(std::move(advice));
    }
}

} // namespace nicer::boinc
