#pragma once

#include "libsystemd/Connection.h"
#include "util/UniqueFd.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <string>

namespace nicer::desktop {

/**
 * A logind sleep inhibitor ("sleep", mode "block"), held while the owner wants the machine awake: logind and
 * the desktops that ask it (GNOME's and KDE's power managers, logind's own IdleAction) do not suspend the
 * machine on their idle timers while it is held. A closed lid, the power button and the volunteer's own
 * "Suspend" still act: logind lets the active session's user override their own inhibitor, and nicer takes no
 * lid-switch inhibitor. Never "idle": the screen still dims and locks as the desktop says.
 *
 * Asked for asynchronously on the system bus (Inhibit, which logind's polkit policy grants any local user
 * without a password), never blocking the loop. The inhibitor is the file descriptor logind answers with:
 * closing it releases it, so it also ends with nicerd, however nicerd ends. The connection is opened only
 * when the inhibitor is first wanted; a refusal is said in note() and asked again at most once a minute.
 */
class SleepInhibitor {
public:
    /// @p systemBusAddress: empty for the system bus (DBUS_SYSTEM_BUS_ADDRESS honoured).
    SleepInhibitor(sd_event* event, std::string systemBusAddress);
    ~SleepInhibitor();
    SleepInhibitor(const SleepInhibitor&) = delete;
    SleepInhibitor& operator=(const SleepInhibitor&) = delete;

    /// Holds the inhibitor, with @p why as the reason logind shows (`systemd-inhibit --list`), or releases
    /// it when @p why is empty. Cheap when nothing changes: call it every period.
    void want(const std::string& why);

    /// logind granted the inhibitor and nicerd holds it now.
    bool held() const { return m_fd.valid(); }
    /// Why the inhibitor that is wanted is not held (logind refused it, or cannot be reached); empty when it
    /// is held, being asked for, or not wanted.
    const std::string& note() const { return m_note; }

private:
    using Clock = std::chrono::steady_clock;
    void ask();
    void onAnswer(sd_bus_message* reply);
    void release();

    libsystemd::Connection m_bus;
    libsystemd::BusSlot m_call; ///< the Inhibit under way
    UniqueFd m_fd;              ///< the inhibitor logind granted
    std::string m_why;          ///< the reason wanted now; empty: none
    std::string m_heldWhy;      ///< the reason of the one held or asked for
    std::string m_note;
    Clock::time_point m_lastTry{};
};

} // namespace nicer::desktop
