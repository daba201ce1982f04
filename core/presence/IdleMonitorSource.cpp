#include "presence/IdleMonitorSource.h"

#include "libsystemd/BusWatch.h"
#include "libsystemd/Message.h"

#include <cerrno>
#include <string_view>

namespace nicer::presence {

namespace {

constexpr const char* kInterface = "org.gnome.Mutter.IdleMonitor";

libsystemd::MethodAddress method(const char* member) {
    return {kIdleMonitorName, kIdleMonitorPath, kInterface, member};
}

} // namespace

Result<std::unique_ptr<IdleMonitorSource>>
IdleMonitorSource::create(sd_bus* bus, std::chrono::milliseconds delay, std::function<void()> changed) {
    auto source = std::unique_ptr<IdleMonitorSource>(new IdleMonitorSource(bus, delay, std::move(changed)));
    auto* self = source.get();
    auto owner = libsystemd::addMatch(
        bus, libsystemd::nameOwnerRule(kIdleMonitorName), [self](sd_bus_message* m) { self->onOwner(m); }, {},
        self->onError());
    if (!owner) {
        return owner.error().within("cannot watch GNOME Shell's idle monitor: ");
    }
    source->m_ownerMatch = std::move(*owner);
    const std::string fired = std::string("type='signal',sender='") + kIdleMonitorName + "',path='" +
                              kIdleMonitorPath + "',interface='" + kInterface + "',member='WatchFired'";
    auto watch = libsystemd::addMatch(
        bus, fired, [self](sd_bus_message* m) { self->onWatchFired(m); }, {}, self->onError());
    if (!watch) {
        return watch.error().within("cannot watch GNOME Shell's idle monitor: ");
    }
    source->m_firedMatch = std::move(*watch);
    auto disconnected = libsystemd::addMatch(
        bus, libsystemd::kDisconnectedRule,
        [self](sd_bus_message*) {
            self->fail("the session bus closed: GNOME's idle monitor is not watched");
        },
        {}, self->onError());
    if (!disconnected) {
        return disconnected.error().within("cannot watch the session bus's end: ");
    }
    source->m_disconnectMatch = std::move(*disconnected);
    source->start();
    return source;
}

libsystemd::ErrorHandler IdleMonitorSource::onError() {
    return [this](std::string_view what) { fail("GNOME's idle monitor: " + std::string(what)); };
}

void IdleMonitorSource::call(const char* member,
                             const std::function<void(libsystemd::MessageWriter&)>& arguments,
                             std::function<void(sd_bus_message*)> answered, bool errorFails) {
    m_calls.emplace_back();
    const auto slot = std::prev(m_calls.end());
    auto made = libsystemd::callMethod(
        m_bus, method(member), arguments,
        [this, slot, answered = std::move(answered), errorFails](sd_bus_message* reply) {
            // sd-bus keeps this callback alive until it returns: its slot may go now.
            m_calls.erase(slot);
            const sd_bus_error* error = sd_bus_message_get_error(reply);
            if (error != nullptr && errorFails) {
                fail(libsystemd::serviceAbsent(error)
                         ? "GNOME Shell's idle monitor is not on the session bus (not a GNOME session)"
                         : "GNOME Shell's idle monitor did not answer (" +
                               libsystemd::busErrorText(-EIO, error) + ")");
                return;
            }
            answered(reply);
        },
        libsystemd::kCallTimeoutUsec, onError());
    if (!made) {
        m_calls.erase(slot);
        fail(made.error().message);
        return;
    }
    *slot = std::move(*made);
}

void IdleMonitorSource::removeWatch(std::uint32_t id) {
    // Its answer is not needed: the watch is gone either way, or dies with the connection.
    call(
        "RemoveWatch", [id](libsystemd::MessageWriter& out) { out.append("u", id); }, [](sd_bus_message*) {},
        false);
}

void IdleMonitorSource::start() {
    ++m_generation; // the answers to the calls made before are stale from now on
    for (std::uint32_t id : {m_idleWatch, m_activeWatch}) {
        if (id != 0) {
            removeWatch(id);
        }
    }
    m_idleWatch = 0;
    m_activeWatch = 0;
    m_activeAsked = false;
    addIdleWatch();
    askIdleTime();
}

void IdleMonitorSource::addIdleWatch() {
    const auto interval = static_cast<std::uint64_t>(m_delay.count());
    call(
        "AddIdleWatch", [&](libsystemd::MessageWriter& out) { out.append("t", interval); },
        [this, generation = m_generation](sd_bus_message* reply) {
            std::uint32_t id = 0;
            if (sd_bus_message_read(reply, "u", &id) < 0) {
                fail("GNOME Shell's idle monitor answered AddIdleWatch with no watch");
            } else if (generation != m_generation) {
                removeWatch(id); // made for a delay that changed since
            } else {
                m_idleWatch = id;
            }
        });
}

void IdleMonitorSource::askIdleTime() {
    call("GetIdletime", {}, [this, generation = m_generation](sd_bus_message* reply) {
        std::uint64_t ms = 0;
        if (sd_bus_message_read(reply, "t", &ms) < 0) {
            fail("GNOME Shell's idle monitor answered GetIdletime with no time");
            return;
        }
        if (generation != m_generation) {
            return;
        }
        const bool idle = std::chrono::milliseconds(ms) >= m_delay;
        if (idle) {
            addActiveWatch();
        } else if (m_activeWatch != 0) {
            // Input came before the user-active watch was in place: it will fire at the next input only.
            removeWatch(m_activeWatch);
            m_activeWatch = 0;
        }
        set(true, idle, "");
    });
}

void IdleMonitorSource::addActiveWatch() {
    if (m_activeWatch != 0 || m_activeAsked) {
        return;
    }
    m_activeAsked = true;
    call("AddUserActiveWatch", {}, [this, generation = m_generation](sd_bus_message* reply) {
        std::uint32_t id = 0;
        if (sd_bus_message_read(reply, "u", &id) < 0) {
            fail("GNOME Shell's idle monitor answered AddUserActiveWatch with no watch");
            return;
        }
        if (generation != m_generation) {
            removeWatch(id);
            return;
        }
        m_activeAsked = false;
        m_activeWatch = id;
        // Input between the idle watch's firing and this watch would go unseen until the next input: the
        // idle time says whether there was some.
        askIdleTime();
    });
}

void IdleMonitorSource::onWatchFired(sd_bus_message* signal) {
    std::uint32_t id = 0;
    if (sd_bus_message_read(signal, "u", &id) < 0 || id == 0) {
        return;
    }
    if (id == m_idleWatch) {
        addActiveWatch();
        set(true, true, "");
    } else if (id == m_activeWatch) {
        m_activeWatch = 0; // a user-active watch fires once
        set(true, false, "");
    }
}

void IdleMonitorSource::onOwner(sd_bus_message* signal) {
    if (libsystemd::newOwner(signal).empty()) {
        fail("GNOME Shell's idle monitor left the session bus");
        return;
    }
    // A new GNOME Shell: the old one's watches died with it.
    m_idleWatch = 0;
    m_activeWatch = 0;
    start();
}

void IdleMonitorSource::setDelay(std::chrono::milliseconds delay) {
    if (delay == m_delay) {
        return;
    }
    m_delay = delay;
    start();
}

void IdleMonitorSource::fail(std::string why) {
    ++m_generation;
    m_calls.clear(); // the answers under way are not wanted
    m_idleWatch = 0;
    m_activeWatch = 0;
    m_activeAsked = false;
    set(false, false, std::move(why));
}

void IdleMonitorSource::set(bool answers, bool idle, std::string note) {
    if (answers == m_answers && idle == m_idle && note == m_note) {
        return;
    }
    m_answers = answers;
    m_idle = idle;
    m_note = std::move(note);
    m_changed();
}

SourceReading IdleMonitorSource::reading() const {
    SourceReading r = notAnswering("GNOME Shell's idle monitor", m_note);
    r.answers = m_answers;
    r.idle = m_idle;
    return r;
}

} // namespace nicer::presence
