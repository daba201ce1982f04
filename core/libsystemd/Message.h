#pragma once

// Writing and reading an sd_bus_message as a chain of calls that keeps the first error: code says what it
// writes or reads, and checks once at the end, instead of `if (r >= 0) r = ...` after every call.

#include "libsystemd/Bus.h"
#include "util/Result.h"

#include <systemd/sd-bus.h>

#include <cstddef>
#include <functional>
#include <utility>

namespace nicer::libsystemd {

/**
 * Appends to an sd_bus_message it does not own. Each call does nothing once a call has failed; result() is
 * that first failure (sd-bus's negative errno), so a message written halfway is never mistaken for a whole
 * one.
 */
class MessageWriter {
public:
    explicit MessageWriter(sd_bus_message* message)
        : m_message(message) {}

    /// sd_bus_message_append(): @p types and the values as sd-bus takes them (int for "b", const char* for
    /// "s", the signature and then the value for "v").
    template <typename... Args>
    MessageWriter& append(const char* types, Args... args) {
        if (ok()) {
            keep(sd_bus_message_append(m_message, types, args...));
        }
        return *this;
    }
    /// sd_bus_message_append_basic(): one value of the basic @p type ('s', 'u', ...).
    MessageWriter& appendBasic(char type, const void* value);
    /// sd_bus_message_append_array(): an array of the fixed-size @p type, @p size bytes at @p data.
    MessageWriter& appendArray(char type, const void* data, std::size_t size);
    /// Opens a container: 'a' (an array of @p contents), 'r' (a struct), 'e' (a dict entry), 'v' (a variant).
    MessageWriter& open(char type, const char* contents);
    /// Closes the container opened last.
    MessageWriter& close();
    /// Runs @p step, an sd-bus style writer of its own (negative errno on failure), unless a call has failed;
    /// its failure is kept like the others'.
    template <typename Step>
    MessageWriter& run(Step&& step) {
        if (ok()) {
            keep(std::forward<Step>(step)());
        }
        return *this;
    }

    /// The first failure (negative errno), else 0.
    int result() const { return m_result; }
    bool ok() const { return m_result >= 0; }
    sd_bus_message* message() const { return m_message; }

private:
    void keep(int r);

    sd_bus_message* m_message;
    int m_result = 0;
};

/**
 * Reads an sd_bus_message it does not own. Each call does nothing once a call has failed; result() is that
 * first failure. The end of the array being read is no failure: read() and enter() return false there, and
 * ok() stays true, so a loop over an array's entries ends there.
 */
class MessageReader {
public:
    explicit MessageReader(sd_bus_message* message)
        : m_message(message) {}

    /// sd_bus_message_read() into the pointers @p args, as sd-bus takes them (int* for "b", const char** for
    /// "s"). True when it read them; false at the end of the array being read, or when a call has failed
    /// (a type other than the message's, the end of the message, ...).
    template <typename... Args>
    bool read(const char* types, Args... args) {
        return ok() && keep(sd_bus_message_read(m_message, types, args...));
    }
    /// sd_bus_message_read_basic(): one value of the basic @p type; true as read() is.
    bool readBasic(char type, void* value);
    /// Enters a container as MessageWriter::open() names it. True when it entered; false at the end of the
    /// array being read (an array's entries are read by entering each until this is false), or on failure.
    bool enter(char type, const char* contents);
    /// Leaves the container entered last.
    void exit();
    /// sd_bus_message_skip(): passes over the values of @p types (e.g. "v", a variant of any type).
    void skip(const char* types);
    /// The next value's type and, for a container, its contents' signature; false at the end of the
    /// container (no value is next) or on failure.
    bool peekType(char* type, const char** contents);
    /// Runs @p step, an sd-bus style reader of its own, unless a call has failed, keeping its failure; its
    /// value (e.g. 0 at an array's end), or the kept failure when it did not run.
    template <typename Step>
    int run(Step&& step) {
        if (!ok()) {
            return m_result;
        }
        const int r = std::forward<Step>(step)();
        keep(r);
        return r;
    }

    /// The first failure (negative errno), else 0.
    int result() const { return m_result; }
    bool ok() const { return m_result >= 0; }
    sd_bus_message* message() const { return m_message; }

private:
    /// Keeps @p r if it is the first failure; true when it read or entered something (r > 0).
    bool keep(int r);

    sd_bus_message* m_message;
    int m_result = 0;
};

/// Where a method call goes: the service's name, the object, the interface and the method.
struct MethodAddress {
    const char* destination;
    const char* path;
    const char* interface;
    const char* member;
};

/**
 * A method call to @p to on @p bus with the arguments @p arguments writes (none when empty). It never starts
 * the service (no D-Bus activation): a watcher only listens to what runs. Fails with sd-bus's errno text,
 * after "cannot call <member>".
 */
Result<BusMessagePtr> newMethodCall(sd_bus* bus, const MethodAddress& to,
                                    const std::function<void(MessageWriter&)>& arguments = {});

} // namespace nicer::libsystemd
