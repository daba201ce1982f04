#pragma once

#include "presence/PresenceSource.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace nicer::presence {

/**
 * The Wayland compositor's idle timer, through the staging protocol ext-idle-notify-v1 (KDE Plasma 6, sway
 * 1.8+, Hyprland, labwc, niri, COSMIC): an ext_idle_notification_v1 of the away delay on the first seat,
 * whose `idled` means away and `resumed` here. The compositor counts the input and honours its own idle
 * inhibitors (a video playing keeps "here"). Never blocks the loop: the connection's file descriptor is an
 * IoSource, and the registry's answer comes through a wl_display.sync callback, not a roundtrip.
 *
 * Says in reading() why it does not answer: no compositor at that display, a compositor without the protocol
 * (GNOME's Mutter, sway 1.7), no seat, or the connection lost (then poll() connects again, at most every 10
 * s).
 */
class WaylandIdleSource final : public PresenceSource {
public:
    /// Connects to @p display (WAYLAND_DISPLAY's value: a socket name in XDG_RUNTIME_DIR, or an absolute
    /// path) on @p event. Fails only where the loop refuses the source; a compositor that is not there is a
    /// reading that says so.
    static Result<std::unique_ptr<WaylandIdleSource>> create(sd_event* event, std::string display,
                                                             std::chrono::milliseconds delay,
                                                             std::function<void()> changed);
    ~WaylandIdleSource() override;
    WaylandIdleSource(const WaylandIdleSource&) = delete;
    WaylandIdleSource& operator=(const WaylandIdleSource&) = delete;

    SourceReading reading() const override;
    void setDelay(std::chrono::milliseconds delay) override;
    void poll() override;

private:
    struct Link; ///< the wl_display and its objects, their listeners' state
    WaylandIdleSource(sd_event* event, std::string display, std::chrono::milliseconds delay,
                      std::function<void()> changed);

    sd_event* m_event;
    std::string m_display;
    std::chrono::milliseconds m_delay;
    std::function<void()> m_changed;
    std::unique_ptr<Link> m_link;
};

} // namespace nicer::presence
