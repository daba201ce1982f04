#pragma once

// What the watches of a service on a bus share (desktop's PowerWatch and GameWatch, presence's sources): the
// match on its name's owner, the owner a NameOwnerChanged names, whether a failed call means the service is
// not there, and how long an answer may take.

#include "libsystemd/Message.h"

#include <systemd/sd-bus.h>

#include <cstdint>
#include <string>

namespace nicer::libsystemd {

/// A service not answering within this is taken as absent (sd-bus's default is 25 s).
inline constexpr std::uint64_t kCallTimeoutUsec = 5'000'000;

/// The match on NameOwnerChanged for @p name alone: every name's changes on a desktop's bus would wake nicerd
/// often.
inline std::string nameOwnerRule(const char* name) {
    return std::string("type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                       "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='") +
           name + "'";
}

/// NameOwnerChanged's new owner: empty when the name left the bus (or the signal cannot be read).
inline std::string newOwner(sd_bus_message* signal) {
    const char* name = nullptr;
    const char* oldOwner = nullptr;
    const char* owner = nullptr;
    MessageReader in(signal);
    in.read("sss", &name, &oldOwner, &owner);
    return owner != nullptr ? owner : "";
}

/// Whether a call's @p error says that no one owns the name it went to.
inline bool serviceAbsent(const sd_bus_error* error) {
    return sd_bus_error_has_names(error, "org.freedesktop.DBus.Error.ServiceUnknown",
                                  "org.freedesktop.DBus.Error.NameHasNoOwner") > 0;
}

} // namespace nicer::libsystemd
