#pragma once

#include "libsystemd/Timer.h"
#include "presence/PresenceSource.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace nicer::presence {

/**
 * The X server's time since the last input, through its MIT-SCREEN-SAVER extension (what xprintidle and
 * BOINC read), for X11 desktops: Cinnamon, XFCE, MATE, GNOME and KDE on X11. Asked without blocking the loop:
 * the request goes out, and its reply is read when the connection's descriptor is readable. Asked every 0.5 s
 * while away (so input makes "here" within that), and while here only when the away delay could have passed.
 *
 * Opening the connection waits for the server's setup reply and the extension's lookup, as any X client
 * does: a stopped X server would hold nicerd there (only at create() and at poll()'s reconnect, at most every
 * 10 s). Under Xwayland the X server sees only its own clients' input: PresenceWatch does not use this source
 * when a Wayland display is set.
 */
class XScreenSaverSource final : public PresenceSource {
public:
    /// Connects to @p display (DISPLAY's value, ":0") with the cookie for it in the file @p xauthority (the
    /// user manager's XAUTHORITY, where nicerd's own environment has none); with an empty one, as every X
    /// client does (XAUTHORITY, else ~/.Xauthority). A server that is not there is a reading that says so.
    static Result<std::unique_ptr<XScreenSaverSource>> create(sd_event* event, std::string display,
                                                              std::string xauthority,
                                                              std::chrono::milliseconds delay,
                                                              std::function<void()> changed);
    ~XScreenSaverSource() override;
    XScreenSaverSource(const XScreenSaverSource&) = delete;
    XScreenSaverSource& operator=(const XScreenSaverSource&) = delete;

    SourceReading reading() const override;
    void setDelay(std::chrono::milliseconds delay) override;
    void poll() override;

private:
    struct Link; ///< the xcb connection, its descriptor's source, the request under way
    using Clock = std::chrono::steady_clock;

    XScreenSaverSource(sd_event* event, std::string display, std::string xauthority,
                       std::chrono::milliseconds delay, std::function<void()> changed);
    void connect();
    /// Sends a QueryInfo, unless one is under way.
    void ask();
    /// The descriptor is readable: the reply, or the connection's end.
    void onReadable();
    /// The link ended or never came: @p why in the reading.
    void lose(std::string why);
    /// When the next QueryInfo goes: soon while away, when the delay could pass while here.
    void scheduleNext();
    void publish();
    bool idle() const;

    sd_event* m_event;
    std::string m_display;
    std::string m_xauthority;
    std::chrono::milliseconds m_delay;
    std::function<void()> m_changed;
    std::unique_ptr<Link> m_link;
    libsystemd::Timer m_next; ///< the next QueryInfo
    Clock::time_point m_lastTry{};
    std::chrono::milliseconds m_sinceInput{0}; ///< as of m_answeredAt
    Clock::time_point m_answeredAt{};
    bool m_answered = false;
    std::string m_note;
    SourceReading m_published; ///< what changed() last told
};

} // namespace nicer::presence
