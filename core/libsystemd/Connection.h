#pragma once

// One connection to a D-Bus bus on nicerd's loop, and the sd-bus matches and asynchronous calls whose
// callbacks are std::functions run through the one guard at the C boundary (Guard.h), so that no watcher
// opens, attaches or reconnects a bus by hand, casts userdata or writes its own exception guard.

#include "libsystemd/Bus.h"
#include "libsystemd/Guard.h"
#include "libsystemd/Message.h"
#include "util/Result.h"

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include <cstdint>
#include <functional>
#include <string>

namespace nicer::libsystemd {

/// The match on sd-bus's own Disconnected message, sent when a connection ends (local: never sent to the
/// bus).
inline constexpr const char* kDisconnectedRule =
    "type='signal',sender='org.freedesktop.DBus.Local',path='/org/freedesktop/DBus/Local',"
    "interface='org.freedesktop.DBus.Local',member='Disconnected'";

/// A match's or a call's callback: the signal, or the reply (sd_bus_message_get_error() says whether it is an
/// error, a timeout's too).
using MessageCallback = std::function<void(sd_bus_message* message)>;

/**
 * An sd_bus_slot of a match or an asynchronous call that owns its callback: unref'd (the match removed, the
 * call's answer dropped) on destruction. It may be destroyed, or replaced, from its own callback.
 */
class BusSlot {
public:
    BusSlot() = default;
    explicit BusSlot(sd_bus_slot* slot)
        : m_slot(slot) {}

    explicit operator bool() const { return m_slot != nullptr; }
    sd_bus_slot* get() const { return m_slot.get(); }
    void reset() { m_slot.reset(); }

private:
    BusSlotPtr m_slot;
};

/**
 * Adds the match @p rule on @p bus without waiting for the bus's answer (sd_bus_add_match_async); @p callback
 * gets each matching message. @p installed gets the bus's answer to AddMatch: without one, sd-bus closes the
 * connection when the bus refuses the match. Exceptions of both go to @p onError. A rule whose sender is
 * org.freedesktop.DBus.Local matches sd-bus's own messages (Disconnected) and never goes to the bus.
 * Fails with sd-bus's errno text.
 */
Result<BusSlot> addMatch(sd_bus* bus, const std::string& rule, MessageCallback callback,
                         MessageCallback installed = {}, ErrorHandler onError = {});

/// Sends @p call and hands its reply, or error, to @p callback within @p timeoutUsec (0: sd-bus's default);
/// an exception from it goes to @p onError. Fails with sd-bus's errno text.
Result<BusSlot> callAsync(sd_bus* bus, sd_bus_message* call, MessageCallback callback,
                          std::uint64_t timeoutUsec, ErrorHandler onError = {});

/// callAsync() of a method call newMethodCall() makes: @p to with the arguments @p arguments writes (none
/// when empty), never starting the service.
Result<BusSlot> callMethod(sd_bus* bus, const MethodAddress& to,
                           const std::function<void(MessageWriter&)>& arguments, MessageCallback callback,
                           std::uint64_t timeoutUsec, ErrorHandler onError = {});

/// Which bus a Connection opens.
struct BusTarget {
    enum class Kind { User, System };
    Kind kind = Kind::System;
    /// When not empty, a bus client of this address instead (tests' private buses).
    std::string address;

    static BusTarget user() { return {Kind::User, {}}; }
    static BusTarget system() { return {Kind::System, {}}; }
    static BusTarget at(std::string address) { return {Kind::System, std::move(address)}; }
    /// The system bus, or the bus at @p address when it is not empty (a watcher's option for tests).
    static BusTarget systemOr(std::string address) {
        return address.empty() ? system() : at(std::move(address));
    }
};

/// A method call on a connection of its own to @p target, sent and flushed without waiting for an answer:
/// the last word of an owner whose loop has ended (sd-bus closes a connection attached to a loop when the
/// loop exits, so the owner's own connection is gone by then). Blocks for the connection and the write only.
Result<void> sendWithoutReply(const BusTarget& target, const MethodAddress& to,
                              const std::function<void(MessageWriter&)>& arguments);

/**
 * A connection to a bus, attached to an sd-event loop. connect() opens it and calls the connected callback,
 * on the first connection and on every new one, so that the owner adds its matches, requests its names and
 * reads the state again there. When sd-bus tells that the connection closed (its Disconnected message, e.g.
 * the bus daemon restarted), the lost callback runs from the loop; the owner connects again when it chooses
 * (nicerd's watchers do so once a period: isOpen() says when). Not movable: the callbacks refer to it.
 */
class Connection {
public:
    struct Callbacks {
        /// After each connect, with the new bus; an error drops that connection and is connect()'s.
        std::function<Result<void>(sd_bus* bus)> connected;
        /// From the loop, when the connection closed. It is still sd-bus's then: connect() later, not here.
        std::function<void()> lost;
        /// Gets what the callbacks of this connection's matches and calls throw (Guard.h); without one, it is
        /// logged as a warning.
        ErrorHandler onError;
    };

    Connection(sd_event* event, BusTarget target, Callbacks callbacks = {},
               int priority = SD_EVENT_PRIORITY_NORMAL);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    /**
     * Drops the connection there is (if any), opens a new one, attaches it to the loop and calls the
     * connected callback. When the bus cannot be opened or attached the error is of kind Unavailable and says
     * why in sd-bus's words (the owner puts it in its own); the connected callback's error comes unchanged.
     */
    Result<void> connect();
    /// Flushes and closes the connection; the owner's slots on it must be dropped before or with it.
    void close();
    /// It was connected and has not closed since.
    bool isOpen() const;
    /// The bus, or null before the first connect() and after close().
    sd_bus* bus() const { return m_bus.get(); }
    const BusTarget& target() const { return m_target; }

    /// addMatch(), callAsync() and callMethod() on this connection, their exceptions going to the Callbacks'
    /// onError.
    Result<BusSlot> addMatch(const std::string& rule, MessageCallback callback,
                             MessageCallback installed = {});
    Result<BusSlot> callAsync(sd_bus_message* call, MessageCallback callback, std::uint64_t timeoutUsec);
    Result<BusSlot> callMethod(const MethodAddress& to, const std::function<void(MessageWriter&)>& arguments,
                               MessageCallback callback, std::uint64_t timeoutUsec);

private:
    sd_event* m_event;
    BusTarget m_target;
    Callbacks m_callbacks;
    int m_priority;
    BusPtr m_bus;
    BusSlot m_lostMatch; ///< sd-bus's Disconnected
};

} // namespace nicer::libsystemd
