#include "desktop/GameWatch.h"

#include "desktop/BusWatch.h"
#include "libsystemd/Message.h"

#include <cerrno>
#include <exception>

namespace nicer::desktop {

namespace {

/// What nicerd does without GameMode, after the reason in each note.
constexpr const char* kFallback = ": games are seen only when named with --exclusive-program";

} // namespace

Result<std::unique_ptr<GameWatch>> GameWatch::create(sd_bus* bus, std::function<void()> changed) {
    auto watch = std::unique_ptr<GameWatch>(new GameWatch(bus, std::move(changed)));
    sd_bus_slot* slot = nullptr;
    const std::string owner = nameOwnerRule(kGameModeName);
    if (int r = sd_bus_add_match_async(bus, &slot, owner.c_str(), &GameWatch::onOwner,
                                       &GameWatch::onMatchInstalled, watch.get());
        r < 0) {
        return libsystemd::busError("cannot watch GameMode's name", r);
    }
    watch->m_ownerMatch.reset(slot);
    // GameRegistered, GameUnregistered and PropertiesChanged (ClientCount): all of gamemoded's signals there.
    const std::string signals =
        std::string("type='signal',sender='") + kGameModeName + "',path='" + kGameModePath + "'";
    if (int r = sd_bus_add_match_async(bus, &slot, signals.c_str(), &GameWatch::onSignal,
                                       &GameWatch::onMatchInstalled, watch.get());
        r < 0) {
        return libsystemd::busError("cannot watch GameMode's signals", r);
    }
    watch->m_signalMatch.reset(slot);
    // sd-bus's own signal when the connection ends (a local match: the bus daemon never sees it).
    if (int r = sd_bus_match_signal_async(bus, &slot, "org.freedesktop.DBus.Local",
                                          "/org/freedesktop/DBus/Local", "org.freedesktop.DBus.Local",
                                          "Disconnected", &GameWatch::onDisconnected, nullptr, watch.get());
        r < 0) {
        return libsystemd::busError("cannot watch the session bus's end", r);
    }
    watch->m_disconnectMatch.reset(slot);
    watch->ask();
    return watch;
}

void GameWatch::ask() {
    if (m_call) {
        m_again = true; // one Get at a time; the answer to the one under way is asked again
        return;
    }
    sd_bus_message* raw = nullptr;
    if (int r = sd_bus_message_new_method_call(m_bus, &raw, kGameModeName, kGameModePath,
                                               "org.freedesktop.DBus.Properties", "Get");
        r < 0) {
        set(false, 0, libsystemd::busError("cannot ask GameMode", r).message);
        return;
    }
    libsystemd::BusMessagePtr call(raw);
    sd_bus_slot* slot = nullptr;
    libsystemd::MessageWriter out(call.get());
    out.append("ss", kGameModeName, "ClientCount")
        .run([&] { return sd_bus_message_set_auto_start(call.get(), 0); }) // never start gamemoded
        .run([&] {
            return sd_bus_call_async(m_bus, &slot, call.get(), &GameWatch::onCount, this, kCallTimeoutUsec);
        });
    if (!out.ok()) {
        set(false, 0, libsystemd::busError("cannot ask GameMode", out.result()).message);
        return;
    }
    m_call.reset(slot);
}

void GameWatch::set(bool available, int count, std::string note) {
    if (!m_broken.empty()) {
        available = false;
        count = 0;
        note = m_broken;
    }
    if (available == m_available && count == m_count && note == m_note) {
        return;
    }
    m_available = available;
    m_count = count;
    m_note = std::move(note);
    m_changed();
}

int GameWatch::onCount(sd_bus_message* reply, void* userdata, sd_bus_error* /*error*/) noexcept {
    auto& self = *static_cast<GameWatch*>(userdata);
    try {
        self.m_call.reset();
        const sd_bus_error* failure = sd_bus_message_get_error(reply);
        int count = 0;
        if (failure != nullptr) {
            self.set(false, 0,
                     serviceAbsent(failure) ? std::string("GameMode is not running") + kFallback
                                            : "GameMode did not answer (" +
                                                  libsystemd::busErrorText(-EIO, failure) + ")" + kFallback);
        } else if (sd_bus_message_read(reply, "v", "i", &count) >= 0) {
            self.set(true, count < 0 ? 0 : count, "");
        } else {
            self.set(false, 0, "GameMode's ClientCount is not a number: games are not seen");
        }
        if (self.m_again) {
            self.m_again = false;
            self.ask();
        }
    } catch (const std::exception& e) {
        self.m_note = std::string("GameMode: ") + e.what();
    } catch (...) {
        self.m_note = "GameMode: an unknown error";
    }
    return 0;
}

int GameWatch::onSignal(sd_bus_message* /*message*/, void* userdata, sd_bus_error* /*error*/) noexcept {
    try {
        static_cast<GameWatch*>(userdata)->ask(); // a game came or went: the count says how many now
    } catch (...) {
    }
    return 0;
}

int GameWatch::onOwner(sd_bus_message* message, void* userdata, sd_bus_error* /*error*/) noexcept {
    auto& self = *static_cast<GameWatch*>(userdata);
    try {
        if (newOwner(message).empty()) {
            self.set(false, 0, std::string("GameMode left the session bus") + kFallback);
        } else {
            self.ask();
        }
    } catch (...) {
    }
    return 0;
}

int GameWatch::onMatchInstalled(sd_bus_message* reply, void* userdata, sd_bus_error* /*error*/) noexcept {
    auto& self = *static_cast<GameWatch*>(userdata);
    try {
        const sd_bus_error* failure = sd_bus_message_get_error(reply);
        if (failure != nullptr) {
            // Returning 0 keeps the connection: sd-bus would close it for a refused match without this
            // callback.
            self.m_broken = "the session bus refused to pass GameMode's signals (" +
                            libsystemd::busErrorText(-EIO, failure) + ")" + kFallback;
            self.set(false, 0, self.m_broken);
        }
    } catch (...) {
    }
    return 0;
}

int GameWatch::onDisconnected(sd_bus_message* /*message*/, void* userdata, sd_bus_error* /*error*/) noexcept {
    auto& self = *static_cast<GameWatch*>(userdata);
    try {
        self.m_broken =
            std::string("the session bus closed: GameMode is not watched until it is connected again") +
            kFallback;
        self.set(false, 0, self.m_broken);
    } catch (...) {
    }
    return 0; // not handled here: sd-bus does what it was told to do when the bus ends
}

} // namespace nicer::desktop
