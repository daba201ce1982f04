#pragma once

#include "libsystemd/Connection.h"
#include "libsystemd/Message.h"
#include "presence/PresenceSource.h"
#include "util/Result.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>

namespace nicer::presence {

/// GNOME Shell's idle monitor on the session bus (Mutter's org.gnome.Mutter.IdleMonitor).
inline constexpr const char* kIdleMonitorName = "org.gnome.Mutter.IdleMonitor";
inline constexpr const char* kIdleMonitorPath = "/org/gnome/Mutter/IdleMonitor/Core";

/**
 * GNOME's idle time, on Wayland and X11 alike: an idle watch of the away delay (WatchFired when it passes
 * without input: away) and, while away, a user-active watch (WatchFired at the next input: here), as
 * gnome-session and gnome-settings-daemon use it. Never polls GNOME Shell and never blocks the loop: every
 * call is asynchronous, starts no service, and the watches die with nicerd's connection. Follows the monitor
 * coming to and leaving the bus (GNOME Shell restarted).
 */
class IdleMonitorSource final : public PresenceSource {
public:
    /// On @p bus, the session bus attached to nicerd's loop by the caller (who connects anew when it closes,
    /// and then makes a new source).
    static Result<std::unique_ptr<IdleMonitorSource>> create(sd_bus* bus, std::chrono::milliseconds delay,
                                                             std::function<void()> changed);
    IdleMonitorSource(const IdleMonitorSource&) = delete;
    IdleMonitorSource& operator=(const IdleMonitorSource&) = delete;

    SourceReading reading() const override;
    void setDelay(std::chrono::milliseconds delay) override;

private:
    IdleMonitorSource(sd_bus* bus, std::chrono::milliseconds delay, std::function<void()> changed)
        : m_bus(bus)
        , m_delay(delay)
        , m_changed(std::move(changed)) {}

    /// From the start: the watches there are removed, the idle watch of the delay made, and the idle time
    /// asked.
    void start();
    void addIdleWatch();
    void askIdleTime();
    /// While away: the watch that fires at the next input (once), unless it is there or asked for.
    void addActiveWatch();
    void removeWatch(std::uint32_t id);
    /// Calls @p member with @p arguments; its answer goes to @p answered, unless it failed and @p errorFails
    /// (then to fail()). Each call's slot is kept in m_calls until its answer.
    void call(const char* member, const std::function<void(libsystemd::MessageWriter&)>& arguments,
              std::function<void(sd_bus_message*)> answered, bool errorFails = true);
    void onWatchFired(sd_bus_message* signal);
    void onOwner(sd_bus_message* signal);
    /// The monitor does not answer, for @p why.
    void fail(std::string why);
    void set(bool answers, bool idle, std::string note);
    libsystemd::ErrorHandler onError();

    sd_bus* m_bus;
    std::chrono::milliseconds m_delay;
    std::function<void()> m_changed;
    libsystemd::BusSlot m_ownerMatch;
    libsystemd::BusSlot m_firedMatch;
    libsystemd::BusSlot m_disconnectMatch;
    std::list<libsystemd::BusSlot> m_calls; ///< the calls under way
    /// Counts start()s and failures: an answer to a call made before the last one is stale.
    std::uint64_t m_generation = 0;
    std::uint32_t m_idleWatch = 0;   ///< the idle watch's id; 0: none yet
    std::uint32_t m_activeWatch = 0; ///< the user-active watch's id while away; 0: none
    bool m_activeAsked = false;      ///< AddUserActiveWatch is under way
    bool m_answers = false;
    bool m_idle = false;
    std::string m_note = "waiting for GNOME Shell's idle monitor";
};

} // namespace nicer::presence
