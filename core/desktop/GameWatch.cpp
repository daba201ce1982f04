#include "desktop/GameWatch.h"

#include "libsystemd/BusWatch.h"
#include "libsystemd/Message.h"

#include <cerrno>
#include <string_view>

namespace nicer::desktop {

namespace {

/// What nicerd does without GameMode, after the reason in each note.
constexpr const char* kFallback = ": games are seen only when named with --exclusive-program";

} // namespace

Result<std::unique_ptr<GameWatch>> GameWatch::create(sd_bus* bus, std::function<void()> changed) {
    auto watch = std::unique_ptr<GameWatch>(new GameWatch(bus, std::move(changed)));
    GameWatch* self = watch.get();
    const auto installed = [self](sd_bus_message* reply) { self->onMatchInstalled(reply); };
    auto owner = libsystemd::addMatch(
        bus, libsystemd::nameOwnerRule(kGameModeName),
        [self](sd_bus_message* message) { self->onOwner(message); }, installed, self->onError());
    if (!owner) {
        return owner.error().within("cannot watch GameMode's name: ");
    }
    watch->m_ownerMatch = std::move(*owner);
    // GameRegistered, GameUnregistered and PropertiesChanged (ClientCount): all of gamemoded's signals there.
    const std::string rule =
        std::string("type='signal',sender='") + kGameModeName + "',path='" + kGameModePath + "'";
    // A game came or went: the count says how many now.
    auto signals = libsystemd::addMatch(
        bus, rule, [self](sd_bus_message*) { self->ask(); }, installed, self->onError());
    if (!signals) {
        return signals.error().within("cannot watch GameMode's signals: ");
    }
    watch->m_signalMatch = std::move(*signals);
    auto disconnected = libsystemd::addMatch(
        bus, libsystemd::kDisconnectedRule, [self](sd_bus_message*) { self->onDisconnected(); }, {},
        self->onError());
    if (!disconnected) {
        return disconnected.error().within("cannot watch the session bus's end: ");
    }
    watch->m_disconnectMatch = std::move(*disconnected);
    watch->ask();
    return watch;
}

libsystemd::ErrorHandler GameWatch::onError() {
    return [this](std::string_view what) { m_note = "GameMode: " + std::string(what); };
}

void GameWatch::ask() {
    if (m_call) {
        m_again = true; // one Get at a time; the answer to the one under way is asked again
        return;
    }
    // callMethod never starts gamemoded.
    auto made = libsystemd::callMethod(
        m_bus, {kGameModeName, kGameModePath, "org.freedesktop.DBus.Properties", "Get"},
        [](libsystemd::MessageWriter& out) { out.append("ss", kGameModeName, "ClientCount"); },
        [this](sd_bus_message* reply) { onCount(reply); }, libsystemd::kCallTimeoutUsec, onError());
    if (!made) {
        set(false, 0, "cannot ask GameMode: " + made.error().message);
        return;
    }
    m_call = std::move(*made);
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

void GameWatch::onCount(sd_bus_message* reply) {
    m_call.reset();
    const sd_bus_error* failure = sd_bus_message_get_error(reply);
    int count = 0;
    if (failure != nullptr) {
        set(false, 0,
            libsystemd::serviceAbsent(failure)
                ? std::string("GameMode is not running") + kFallback
                : "GameMode did not answer (" + libsystemd::busErrorText(-EIO, failure) + ")" + kFallback);
    } else if (sd_bus_message_read(reply, "v", "i", &count) >= 0) {
        set(true, count < 0 ? 0 : count, "");
    } else {
        set(false, 0, "GameMode's ClientCount is not a number: games are not seen");
    }
    if (m_again) {
        m_again = false;
        ask();
    }
}

void GameWatch::onOwner(sd_bus_message* message) {
    if (libsystemd::newOwner(message).empty()) {
        set(false, 0, std::string("GameMode left the session bus") + kFallback);
    } else {
        ask();
    }
}

void GameWatch::onMatchInstalled(sd_bus_message* reply) {
    if (const sd_bus_error* failure = sd_bus_message_get_error(reply)) {
        // Handled here, the connection stays: sd-bus would close it for a refused match without this
        // callback.
        m_broken = "the session bus refused to pass GameMode's signals (" +
                   libsystemd::busErrorText(-EIO, failure) + ")" + kFallback;
        set(false, 0, m_broken);
    }
}

void GameWatch::onDisconnected() {
    // Only told: sd-bus does what it was told to do when the bus ends, and the owner connects anew.
    m_broken = std::string("the session bus closed: GameMode is not watched until it is connected again") +
               kFallback;
    set(false, 0, m_broken);
}

} // namespace nicer::desktop
