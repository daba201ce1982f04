#pragma once

#include "presence/IdleMonitorSource.h"
#include "presence/LogindSource.h"
#include "presence/PresenceVerdict.h"
#include "presence/WaylandIdleSource.h"
#include "presence/XScreenSaverSource.h"

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace nicer::presence {

/// Where the desktop's displays are: DISPLAY's and WAYLAND_DISPLAY's values (empty: none).
struct Displays {
    std::string x11;
    std::string wayland;
    std::string xauthority; ///< XAUTHORITY's value, where the user manager has one

    bool operator==(const Displays&) const = default;
};

/// The display variables in an environment block ("NAME=value" entries, as the user manager's Environment).
Displays displaysIn(const std::vector<std::string>& environment);

/**
 * Whether the volunteer is at the machine, from every source of the desktop nicerd can read as its user, each
 * separately and all without blocking its loop (docs/architecture.md, "Here or away"). Trusted in this order,
 * the first that answers deciding: GNOME Shell's idle monitor (session bus), the Wayland compositor's
 * ext-idle-notify-v1, X11's XScreenSaver (not under a Wayland display: Xwayland sees only its own clients),
 * logind's IdleHint; a lock that logind knows of is away whatever the others say.
 *
 * nicerd is a user service and often starts before the desktop: the displays come from its own environment,
 * else from the user manager's (where desktops put DISPLAY and WAYLAND_DISPLAY for the services they start),
 * asked on the session bus and again every 30 s until one is found.
 */
class PresenceWatch {
public:
    struct Options {
        std::string systemBusAddress; ///< empty: the system bus
        uid_t uid;                    ///< nicerd's user, whose session logind is asked about
        Displays displays;            ///< from nicerd's environment; empty ones are asked of the user manager
    };

    /// On nicerd's loop; @p changed is called from the loop whenever verdict() may have changed (never from
    /// create()). It must not destroy the watch.
    static Result<std::unique_ptr<PresenceWatch>>
    create(sd_event* event, Options options, std::chrono::milliseconds delay, std::function<void()> changed);
    PresenceWatch(const PresenceWatch&) = delete;
    PresenceWatch& operator=(const PresenceWatch&) = delete;

    /// The session bus, (again) connected and attached to the loop by the owner: GNOME's idle monitor is
    /// watched there, and the user manager asked for the displays. Null: the bus closed.
    void setSessionBus(sd_bus* bus);
    /// The away delay from now on.
    void setDelay(std::chrono::milliseconds delay);
    /// Whether logind is told the verdict of the other sources (ControllerParams::logindIdleHint): the
    /// display session's IdleHint, for programs that read only logind's (LogindSource::tellIdle). Never the
    /// verdict logind itself gave; a hint told is taken back when it is turned off or no other source
    /// answers.
    void setTellLogind(bool tell) { m_tellLogind = tell; }
    /// Once a period: the sources whose link ended try again, the displays are asked for while none is
    /// known, and logind is told the verdict when setTellLogind() says so.
    void poll();

    PresenceVerdict verdict() const;

private:
    using Clock = std::chrono::steady_clock;
    PresenceWatch(sd_event* event, Options options, std::chrono::milliseconds delay,
                  std::function<void()> changed)
        : m_event(event)
        , m_options(std::move(options))
        , m_delay(delay)
        , m_changed(std::move(changed)) {}

    /// Every source's reading, in the order they are trusted.
    std::vector<SourceReading> readings() const;
    /// Makes the display sources for what is known of the displays now.
    Result<void> useDisplays(Displays displays);
    void askManagerEnvironment();
    /// Calls the owner's changed(), once create() has returned.
    void notify();

    sd_event* m_event;
    Options m_options;
    std::chrono::milliseconds m_delay;
    std::function<void()> m_changed;
    bool m_notify = false;
    bool m_tellLogind = false;
    Displays m_displays;
    sd_bus* m_sessionBus = nullptr;
    libsystemd::BusSlot m_environmentCall;
    Clock::time_point m_lastAsked{};
    std::string m_displayNote;
    std::unique_ptr<IdleMonitorSource> m_idleMonitor;
    std::string m_idleMonitorNote = "no session bus to ask GNOME Shell's idle monitor";
    std::unique_ptr<WaylandIdleSource> m_wayland;
    std::unique_ptr<XScreenSaverSource> m_x11;
    std::unique_ptr<LogindSource> m_logind;
};

} // namespace nicer::presence
