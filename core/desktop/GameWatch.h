#pragma once

#include "libsystemd/Connection.h"
#include "util/Result.h"

#include <functional>
#include <memory>
#include <string>

namespace nicer::desktop {

/// Feral's GameMode on the session bus: its name, object and interface.
inline constexpr const char* kGameModeName = "com.feralinteractive.GameMode";
inline constexpr const char* kGameModePath = "/com/feralinteractive/GameMode";

/**
 * The games that run with GameMode (`gamemoderun`, Steam's launch option, games that link libgamemode): its
 * daemon gamemoded counts them in ClientCount. Read when it changes (GameRegistered, GameUnregistered,
 * PropertiesChanged, and gamemoded coming to or leaving the bus), never polled, never blocking the loop, and
 * never starting gamemoded (it is D-Bus activatable, and nicerd only listens). When the session bus refuses
 * the watch or closes, the watch says so in note() and counts no game; the owner of the bus connects anew.
 */
class GameWatch {
public:
    /// On @p bus (attached to nicerd's loop by the caller); @p changed is called from the loop whenever
    /// clientCount(), available() or note() changed. It must not destroy the watch.
    static Result<std::unique_ptr<GameWatch>> create(sd_bus* bus, std::function<void()> changed);
    GameWatch(const GameWatch&) = delete;
    GameWatch& operator=(const GameWatch&) = delete;

    /// Games registered now; 0 without gamemoded.
    int clientCount() const { return m_count; }
    /// Whether gamemoded answered on the bus.
    bool available() const { return m_available; }
    /// Why games are not seen, in plain words; empty while gamemoded answers.
    const std::string& note() const { return m_note; }

private:
    GameWatch(sd_bus* bus, std::function<void()> changed)
        : m_bus(bus)
        , m_changed(std::move(changed)) {}
    /// Asks gamemoded for ClientCount; its answer (or that it is not there) comes to onCount.
    void ask();
    void set(bool available, int count, std::string note);

    void onCount(sd_bus_message* reply);
    void onOwner(sd_bus_message* message);
    void onMatchInstalled(sd_bus_message* reply);
    void onDisconnected();
    /// What the callbacks throw (libsystemd's guard catches it) goes to note().
    libsystemd::ErrorHandler onError();

    sd_bus* m_bus;
    std::function<void()> m_changed;
    libsystemd::BusSlot m_ownerMatch;
    libsystemd::BusSlot m_signalMatch;
    libsystemd::BusSlot m_disconnectMatch;
    libsystemd::BusSlot m_call; ///< the Get under way
    bool m_again = false;       ///< a signal came while it was under way: ask once more
    std::string m_broken;       ///< why the watch cannot work any more (a match refused, the bus closed)
    int m_count = 0;
    bool m_available = false;
    std::string m_note = "waiting for GameMode's answer";
};

} // namespace nicer::desktop
