#pragma once

#include "libsystemd/Connection.h"
#include "util/UniqueFd.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <string>

namespace nicer::desktop {

/**
 * Keeps the machine from sleeping on its idle timer while the owner wants it awake, by one of two routes:
 *
 * - logind's sleep inhibitor ("sleep", mode "block"): logind and the desktops that ask it (KDE's power
 *   manager, logind's own IdleAction) do not suspend while it is held. It is the file descriptor logind
 *   answers Inhibit with: closing it releases it, so it also ends with nicerd, however nicerd ends. logind's
 *   polkit policy grants it without a password to the programs of a local session only (allow_inactive,
 *   allow_active), not to a user service such as nicerd (allow_any is "no"), unless an administrator's rule
 *   does; so where logind refuses,
 * - the desktop's portal (org.freedesktop.portal.Inhibit on the session bus, flag "suspend"): GNOME's and
 * KDE's power managers honour it, for any program of the user's, without a password. Closing its request
 * releases it; so does nicerd leaving the session bus.
 *
 * Never "idle": the screen still dims and locks as the desktop says. A closed lid, the power button and the
 * volunteer's own "Suspend" still act. Asked for asynchronously, never blocking the loop; the connections are
 * opened only when the inhibitor is first wanted; when neither route grants it, note() says why each did not,
 * and it is asked again at most once a minute.
 */
class SleepInhibitor {
public:
    /// @p systemBus for logind, @p sessionBus for the portal (BusTarget::user(), or a test's bus).
    SleepInhibitor(sd_event* event, libsystemd::BusTarget systemBus, libsystemd::BusTarget sessionBus);
    ~SleepInhibitor();
    SleepInhibitor(const SleepInhibitor&) = delete;
    SleepInhibitor& operator=(const SleepInhibitor&) = delete;

    /// Holds the inhibitor, with @p why as the reason shown (`systemd-inhibit --list`, the desktop's power
    /// settings), or releases it when @p why is empty. Cheap when nothing changes: call it every period.
    void want(const std::string& why);

    /// Which route holds it now: "logind", "the desktop's portal", or empty when none does.
    const std::string& heldBy() const { return m_heldBy; }
    bool held() const { return !m_heldBy.empty(); }
    /// Why the inhibitor that is wanted is not held (both routes refused, or cannot be reached); empty when
    /// it is held, being asked for, or not wanted.
    const std::string& note() const { return m_note; }

private:
    using Clock = std::chrono::steady_clock;
    void askLogind();
    void onLogind(sd_bus_message* reply);
    void askPortal();
    void onPortal(sd_bus_message* reply);
    /// Takes the new inhibitor's route, and releases the one held before (another reason) after it, so that
    /// the machine is never without one in between.
    void granted(const char* route);
    void refused(std::string why);
    /// Ends the portal's inhibition @p request (none: nothing), without waiting for the answer.
    void closePortalRequest(const std::string& request);
    void release();

    libsystemd::Connection m_system;
    libsystemd::Connection m_session;
    libsystemd::BusSlot m_call; ///< the Inhibit under way, on either bus
    UniqueFd m_fd;              ///< logind's inhibitor
    std::string m_request;      ///< the portal's inhibition (its Request object)
    std::string m_heldBy;
    std::string m_why;     ///< the reason wanted now; empty: none
    std::string m_heldWhy; ///< the reason of the one held or asked for
    std::string m_logindRefusal;
    std::string m_note;
    Clock::time_point m_lastTry{};
};

} // namespace nicer::desktop
