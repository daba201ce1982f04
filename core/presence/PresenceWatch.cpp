#include "presence/PresenceWatch.h"

#include "libsystemd/BusWatch.h"
#include "libsystemd/Message.h"
#include "util/Log.h"

#include <cerrno>
#include <string_view>

namespace nicer::presence {

namespace {

constexpr std::chrono::seconds kAskInterval{30};

constexpr const char* kIdleMonitorWords = "GNOME Shell's idle monitor";
constexpr const char* kWaylandWords = "the compositor's idle notifications (ext-idle-notify-v1)";
constexpr const char* kX11Words = "XScreenSaver";

} // namespace

Displays displaysIn(const std::vector<std::string>& environment) {
    Displays found;
    for (const std::string& entry : environment) {
        const auto equals = entry.find('=');
        if (equals == std::string::npos) {
            continue;
        }
        const std::string_view name(entry.data(), equals);
        const std::string value = entry.substr(equals + 1);
        if (name == "DISPLAY") {
            found.x11 = value;
        } else if (name == "WAYLAND_DISPLAY") {
            found.wayland = value;
        } else if (name == "XAUTHORITY") {
            found.xauthority = value;
        }
    }
    return found;
}

Result<std::unique_ptr<PresenceWatch>> PresenceWatch::create(sd_event* event, Options options,
                                                             std::chrono::milliseconds delay,
                                                             std::function<void()> changed) {
    auto watch = std::unique_ptr<PresenceWatch>(
        new PresenceWatch(event, std::move(options), delay, std::move(changed)));
    auto* self = watch.get();
    auto logind = LogindSource::create(
        event, {.systemBusAddress = watch->m_options.systemBusAddress, .uid = watch->m_options.uid},
        [self] { self->notify(); });
    if (!logind) {
        return logind.error();
    }
    watch->m_logind = std::move(*logind);
    if (auto used = watch->useDisplays(watch->m_options.displays); !used) {
        return used.error();
    }
    watch->m_notify = true; // from now on, from the loop
    return watch;
}

Result<void> PresenceWatch::useDisplays(Displays displays) {
    if (displays == m_displays) {
        return {};
    }
    m_wayland.reset();
    m_x11.reset();
    m_displays = std::move(displays);
    const auto changed = [this] { notify(); };
    if (!m_displays.wayland.empty()) {
        auto source = WaylandIdleSource::create(m_event, m_displays.wayland, m_delay, changed);
        if (!source) {
            return source.error();
        }
        m_wayland = std::move(*source);
    } else if (!m_displays.x11.empty()) {
        // Only without a Wayland display: under one, DISPLAY is Xwayland's, which sees only its own clients'
        // input.
        auto source =
            XScreenSaverSource::create(m_event, m_displays.x11, m_displays.xauthority, m_delay, changed);
        if (!source) {
            return source.error();
        }
        m_x11 = std::move(*source);
    }
    return {};
}

void PresenceWatch::setSessionBus(sd_bus* bus) {
    m_environmentCall.reset();
    m_idleMonitor.reset();
    m_sessionBus = bus;
    if (bus == nullptr) {
        m_idleMonitorNote = "no session bus to ask GNOME Shell's idle monitor";
        return;
    }
    auto monitor = IdleMonitorSource::create(bus, m_delay, [this] { notify(); });
    if (monitor) {
        m_idleMonitor = std::move(*monitor);
    } else {
        m_idleMonitorNote = monitor.error().message;
    }
    if (m_displays.wayland.empty() && m_displays.x11.empty()) {
        askManagerEnvironment();
    }
}

void PresenceWatch::askManagerEnvironment() {
    m_lastAsked = Clock::now();
    auto made = libsystemd::callMethod(
        m_sessionBus,
        {"org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.DBus.Properties", "Get"},
        [](libsystemd::MessageWriter& out) {
            out.append("ss", "org.freedesktop.systemd1.Manager", "Environment");
        },
        [this](sd_bus_message* reply) {
            if (const sd_bus_error* error = sd_bus_message_get_error(reply)) {
                m_displayNote = "the user manager did not tell its environment (" +
                                libsystemd::busErrorText(-EIO, error) + ")";
                return;
            }
            std::vector<std::string> environment;
            libsystemd::MessageReader in(reply);
            in.enter('v', "as");
            in.enter('a', "s");
            const char* entry = nullptr;
            while (in.read("s", &entry)) {
                environment.emplace_back(entry);
            }
            Displays found = displaysIn(environment);
            if (found.wayland.empty() && found.x11.empty()) {
                m_displayNote =
                    "neither nicerd nor the user manager knows a display (DISPLAY, WAYLAND_DISPLAY)";
                return;
            }
            m_displayNote.clear();
            log::info() << "nicerd: the desktop's displays, from the user manager: "
                        << (found.wayland.empty() ? "" : "WAYLAND_DISPLAY=" + found.wayland + " ")
                        << (found.x11.empty() ? "" : "DISPLAY=" + found.x11);
            if (auto used = useDisplays(std::move(found)); !used) {
                m_displayNote = used.error().message;
            }
            notify();
        },
        libsystemd::kCallTimeoutUsec);
    if (!made) {
        m_displayNote = "cannot ask the user manager for the displays: " + made.error().message;
        return;
    }
    m_environmentCall = std::move(*made);
}

void PresenceWatch::setDelay(std::chrono::milliseconds delay) {
    if (delay == m_delay) {
        return;
    }
    m_delay = delay;
    for (PresenceSource* source : std::initializer_list<PresenceSource*>{m_idleMonitor.get(), m_wayland.get(),
                                                                         m_x11.get(), m_logind.get()}) {
        if (source != nullptr) {
            source->setDelay(delay);
        }
    }
    notify();
}

void PresenceWatch::poll() {
    for (PresenceSource* source :
         std::initializer_list<PresenceSource*>{m_wayland.get(), m_x11.get(), m_logind.get()}) {
        if (source != nullptr) {
            source->poll();
        }
    }
    if (m_sessionBus != nullptr && m_displays.wayland.empty() && m_displays.x11.empty() &&
        Clock::now() - m_lastAsked >= kAskInterval) {
        askManagerEnvironment();
    }
    const auto now = verdict();
    const bool fromOthers =
        now.presence != control::Presence::Unknown && now.source != m_logind->reading().source;
    m_logind->tellIdle(m_tellLogind && fromOthers ? std::optional(now.presence == control::Presence::Away)
                                                  : std::nullopt);
}

std::vector<SourceReading> PresenceWatch::readings() const {
    std::vector<SourceReading> all;
    all.push_back(m_idleMonitor ? m_idleMonitor->reading()
                                : notAnswering(kIdleMonitorWords, m_idleMonitorNote));
    const std::string noDisplay = m_displayNote.empty() ? "" : " (" + m_displayNote + ")";
    all.push_back(m_wayland
                      ? m_wayland->reading()
                      : notAnswering(kWaylandWords, "no Wayland display (WAYLAND_DISPLAY)" + noDisplay));
    if (m_x11) {
        all.push_back(m_x11->reading());
    } else if (m_displays.wayland.empty()) {
        all.push_back(notAnswering(kX11Words, "no X display (DISPLAY)" + noDisplay));
    } else {
        all.push_back(notAnswering(kX11Words, "not used under Wayland: X11 sees only Xwayland's clients"));
    }
    all.push_back(m_logind->reading());
    return all;
}

void PresenceWatch::notify() {
    if (m_notify) {
        m_changed();
    }
}

PresenceVerdict PresenceWatch::verdict() const {
    return decide(readings(), m_delay);
}

} // namespace nicer::presence
