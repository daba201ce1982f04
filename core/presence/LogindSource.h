#pragma once

#include "libsystemd/Connection.h"
#include "libsystemd/Message.h"
#include "presence/PresenceSource.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>

namespace nicer::presence {

/**
 * logind's word on the user's graphical session (the User's Display session, on the system bus): its
 * LockedHint (a locked screen is away, on every desktop that tells logind: GNOME, KDE, and any screen locker
 * that calls SetLockedHint) and its IdleHint (set by the desktop after its own idle delay: GNOME sets it,
 * many desktops never do). The last source PresenceWatch trusts for input, and the one it trusts first for a
 * lock. Read when it changes (PropertiesChanged), never polled, never blocking the loop; follows logind and
 * the system bus restarting, and the display session changing as sessions start and end (SessionNew,
 * SessionRemoved); without an answer it asks again each poll(), at most every 10 s.
 */
class LogindSource final : public PresenceSource {
public:
    struct Options {
        std::string systemBusAddress; ///< empty: the system bus (DBUS_SYSTEM_BUS_ADDRESS honoured)
        uid_t uid;                    ///< whose graphical session: nicerd's own user
    };

    static Result<std::unique_ptr<LogindSource>> create(sd_event* event, Options options,
                                                        std::function<void()> changed);
    ~LogindSource() override;
    LogindSource(const LogindSource&) = delete;
    LogindSource& operator=(const LogindSource&) = delete;

    SourceReading reading() const override;
    /// logind's IdleHint keeps the desktop's own delay: nothing to ask anew.
    void setDelay(std::chrono::milliseconds) override {}
    void poll() override;

    /// Tells logind that the volunteer is away (@p idle true) or here, as the display session's IdleHint
    /// (SetIdleHint, which logind allows the session's owner), once per change: for programs that read only
    /// logind's hint (Folding@home's "only when idle"), on desktops that never set it. None: nothing to
    /// tell, and a hint set to idle before is taken back (not idle), as it is when this source ends.
    void tellIdle(std::optional<bool> idle);

private:
    using Clock = std::chrono::steady_clock;
    LogindSource(sd_event* event, Options options, std::function<void()> changed);

    void connect();
    Result<void> watch();
    /// From the user to their display session, then its hints.
    void askUser();
    void askDisplay(const std::string& userPath);
    void askSession();
    void onSessionChanged(sd_bus_message* signal);
    /// Reads IdleHint, LockedHint and Id from a dictionary of properties (GetAll's, PropertiesChanged's).
    void readHints(sd_bus_message* message);
    Result<void> callAsync(const libsystemd::MethodAddress& to,
                           const std::function<void(libsystemd::MessageWriter&)>& arguments,
                           std::function<void(sd_bus_message*)> answered);
    void fail(std::string why);
    void publish();

    Options m_options;
    std::function<void()> m_changed;
    libsystemd::Connection m_bus;
    libsystemd::BusSlot m_ownerMatch;
    libsystemd::BusSlot m_changedMatch;
    libsystemd::BusSlot m_sessionsMatch; ///< SessionNew, SessionRemoved: the display session may change
    libsystemd::BusSlot m_call;
    libsystemd::BusSlot m_tell; ///< SetIdleHint, apart from the chain of questions
    std::optional<bool> m_told; ///< the hint last set by tellIdle(); none: never, or taken back
    std::string m_toldPath;     ///< on which session
    Clock::time_point m_lastTry{};
    std::string m_sessionPath; ///< the display session's object; empty: none found
    std::string m_sessionId;
    bool m_answers = false;
    bool m_idle = false;
    bool m_locked = false;
    std::string m_note = "waiting for logind's answer";
    SourceReading m_published;
};

} // namespace nicer::presence
