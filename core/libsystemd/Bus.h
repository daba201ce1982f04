#pragma once

// RAII for sd-bus handles and errors, shared by everything in nicer that talks D-Bus.

#include "util/Result.h"

#include <systemd/sd-bus.h>

#include <memory>
#include <string>
#include <string_view>
#include <system_error>

namespace nicer::libsystemd {

struct SdBusDeleter {
    // Flush first: a connection closed with queued messages (e.g. a reply to a caller) would drop them.
    void operator()(sd_bus* bus) const noexcept { sd_bus_flush_close_unref(bus); }
};
struct SdBusMessageDeleter {
    void operator()(sd_bus_message* message) const noexcept { sd_bus_message_unref(message); }
};
struct SdBusSlotDeleter {
    void operator()(sd_bus_slot* slot) const noexcept { sd_bus_slot_unref(slot); }
};

using BusPtr = std::unique_ptr<sd_bus, SdBusDeleter>;
using BusMessagePtr = std::unique_ptr<sd_bus_message, SdBusMessageDeleter>;
using BusSlotPtr = std::unique_ptr<sd_bus_slot, SdBusSlotDeleter>;

/// An sd_bus_error that frees itself. Pass get() to sd-bus calls that fill one in.
class BusError {
public:
    BusError() = default;
    ~BusError() { sd_bus_error_free(&m_error); }
    BusError(const BusError&) = delete;
    BusError& operator=(const BusError&) = delete;

    sd_bus_error* get() { return &m_error; }
    const sd_bus_error* get() const { return &m_error; }
    bool isSet() const { return sd_bus_error_is_set(&m_error) > 0; }
    /// True when the error is the D-Bus error @p name, e.g. "org.freedesktop.systemd1.NoSuchUnit".
    bool hasName(const char* name) const { return sd_bus_error_has_name(&m_error, name) > 0; }
    std::string_view name() const { return m_error.name ? m_error.name : ""; }
    std::string_view message() const { return m_error.message ? m_error.message : ""; }
    /// Frees and clears it, so the same object can take the next call's error.
    void reset() { sd_bus_error_free(&m_error); }

private:
    sd_bus_error m_error{}; // SD_BUS_ERROR_NULL, without its C compound literal
};

/// The readable part of a failed sd-bus call: the remote error's message where the peer sent one, else the
/// local errno's text (@p r is the call's negative return value).
inline std::string busErrorText(int r, const sd_bus_error* error) {
    if (error && sd_bus_error_is_set(error)) {
        if (error->message && *error->message) {
            return error->message;
        }
        return error->name;
    }
    return std::generic_category().message(r < 0 ? -r : r);
}

/// "<what>: <message>" for a failed sd-bus call, e.g. "systemd StopUnit(x.service): Unit x.service not
/// loaded."
inline Error busError(std::string_view what, int r, const sd_bus_error* error = nullptr) {
    return Error{std::string(what) + ": " + busErrorText(r, error)};
}

inline Error busError(std::string_view what, int r, const BusError& error) {
    return busError(what, r, error.get());
}

} // namespace nicer::libsystemd
