#pragma once

#include "desktop/PowerSupplies.h"
#include "libsystemd/Connection.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace nicer::desktop {

/**
 * The power state, read when it changes: from UPower on the system bus (OnBattery, and the display device's
 * Percentage and IsPresent, through their PropertiesChanged signals) and from power-profiles-daemon's
 * ActiveProfile (under either of its bus names). Never polls UPower and never blocks the loop: every call is
 * asynchronous and starts no service. Where UPower is not on the bus, or leaves it, or there is no system
 * bus, the power_supply directory is read instead, at create() and at each poll(), and note() says so; UPower
 * is used again as soon as it is back on the bus.
 */
class PowerWatch {
public:
    struct Options {
        std::string systemBusAddress; ///< empty: the system bus (sd_bus_open_system, which honours
                                      ///< DBUS_SYSTEM_BUS_ADDRESS)
        std::filesystem::path powerSupplyDir = "/sys/class/power_supply";
    };

    /// On nicerd's loop @p event; @p changed is called (from the loop) whenever state() or note() changed. It
    /// must not destroy the watch. A missing system bus is no error: the watch reads the power_supply
    /// directory.
    static Result<std::unique_ptr<PowerWatch>> create(sd_event* event, Options options,
                                                      std::function<void()> changed);
    ~PowerWatch();
    PowerWatch(const PowerWatch&) = delete;
    PowerWatch& operator=(const PowerWatch&) = delete;

    const PowerState& state() const { return m_state; }
    /// Plain words on where the state comes from when it is not UPower, or what went wrong ("UPower is not on
    /// the system bus: reading /sys/class/power_supply"; "UPower left the system bus: ..."); empty when
    /// UPower answers.
    const std::string& note() const { return m_note; }
    /// Called by nicerd once per period: reads the power_supply directory only while UPower is not there (the
    /// fallback polls; UPower is never polled), and connects again to a system bus that closed.
    void poll();

private:
    /// One of power-profiles-daemon's bus names: its matches, its call under way and what it said.
    struct ProfilesService;

    PowerWatch(sd_event* event, Options options, std::function<void()> changed);

    void connect();
    void disconnect();
    /// On each new connection: the matches, then the calls that read the values.
    Result<void> watch();
    Result<void> addMatch(libsystemd::BusSlot& slot, const std::string& rule,
                          libsystemd::MessageCallback callback);
    Result<void> callAsync(libsystemd::BusSlot& slot, const char* destination, const char* path,
                           const char* interface, const char* method, libsystemd::MessageCallback callback,
                           const char* argument);
    /// Asks UPower from the start: its display device's path, then its and the device's properties.
    void askUpower();
    void askDisplayDevice();
    void askProfiles(ProfilesService& service);
    /// UPower is not used (any more) for @p reason: the power_supply directory is.
    void fallBack(std::string reason);
    void readFallback();
    /// Works out state() and note() and calls changed() when either changed.
    void publish();

    // The connection's callbacks, run through libsystemd's guard: what they throw ends in the note.
    void onDisplayPath(sd_bus_message* reply);
    void onUpowerProperties(sd_bus_message* reply);
    void onDisplayProperties(sd_bus_message* reply);
    void onUpowerChanged(sd_bus_message* signal);
    void onUpowerOwner(sd_bus_message* signal);
    void onProfiles(ProfilesService& service, sd_bus_message* message);
    void onProfilesOwner(ProfilesService& service, sd_bus_message* signal);
    void onDisconnected();

    Options m_options;
    std::function<void()> m_changed;
    // The connection first: the slots below go before it.
    libsystemd::Connection m_bus;
    libsystemd::BusSlot m_upowerOwnerMatch;
    libsystemd::BusSlot m_upowerMatch;
    libsystemd::BusSlot m_displayMatch;
    libsystemd::BusSlot m_upowerCall; ///< the call of askUpower()'s chain under way
    std::array<std::unique_ptr<ProfilesService>, 2> m_profiles;

    std::string m_displayPath;
    bool m_upowerActive = false; ///< UPower answered; its values below are state()'s
    bool m_upowerOnBattery = false;
    double m_upowerPercent = -1.0;
    bool m_displayPresent = false;
    std::string m_reason; ///< why UPower is not used, while it is not
    PowerState m_fallback;
    std::string m_fallbackNote;

    PowerState m_state;
    std::string m_note;
    bool m_notify = false; ///< changed() is called: create() has returned
};

} // namespace nicer::desktop
