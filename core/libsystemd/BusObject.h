#pragma once

// An object on a bus whose property getters and method handlers are std::functions, run through the one
// guard at the C boundary (Guard.h): no owner writes a static handler, casts userdata or catches its own
// exceptions. What a handler throws becomes a D-Bus error reply (org.freedesktop.DBus.Error.Failed with its
// what()), never an escape into sd-bus.

#include "libsystemd/Bus.h"
#include "util/Result.h"

#include <systemd/sd-bus.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nicer::libsystemd {

/// A property's getter: appends the value to @p reply (or sets @p error); sd-bus's return convention.
using PropertyGetter = std::function<int(sd_bus_message* reply, sd_bus_error* error)>;

/// A method's handler: reads the arguments of @p call and replies, or sets @p error, or returns a negative
/// errno (sd-bus answers with it); returns 1 when the reply is sent later, from the loop.
using MethodHandler = std::function<int(sd_bus_message* call, sd_bus_error* error)>;

/// How clients learn a property's changes: never (constant), PropertiesChanged with the value, or by
/// reading it again.
enum class PropertyChanges { Constant, Announced, Read };

struct BusProperty {
    std::string name;
    std::string signature;
    PropertyChanges changes = PropertyChanges::Read;
    PropertyGetter get;
};

struct BusMethod {
    std::string name;
    std::string in;  ///< the arguments' signature
    std::string out; ///< the reply's signature
    MethodHandler handler;
};

struct BusSignal {
    std::string name;
    std::string signature;
};

/// An interface's members, in the order introspection lists them.
struct BusInterface {
    std::vector<BusProperty> properties;
    std::vector<BusMethod> methods;
    std::vector<BusSignal> busSignals; ///< not `signals`: Qt defines that word as a macro
};

/**
 * An interface's members published at a path on a bus: the vtable sd-bus reads is built from them and lives
 * as long as the object; destroying the object withdraws it. Every method may be called by any user the bus
 * lets through (SD_BUS_VTABLE_UNPRIVILEGED): the bus's policy decides who reaches it.
 */
class BusObject {
public:
    /// Publishes @p members as @p interface at @p path on @p bus (not owned; it must outlive the object).
    /// Fails with sd-bus's errno text.
    static Result<std::unique_ptr<BusObject>> publish(sd_bus* bus, const std::string& path,
                                                      const std::string& interface, BusInterface members);

    BusObject(const BusObject&) = delete;
    BusObject& operator=(const BusObject&) = delete;
    ~BusObject() = default;

private:
    explicit BusObject(BusInterface members);

    static int runGetter(sd_bus* bus, const char* path, const char* interface, const char* property,
                         sd_bus_message* reply, void* userdata, sd_bus_error* error) noexcept;
    static int runMethod(sd_bus_message* call, void* userdata, sd_bus_error* error) noexcept;

    BusInterface m_members;              ///< never resized: the vtable points at its strings
    std::vector<sd_bus_vtable> m_vtable; ///< built from m_members
    BusSlotPtr m_slot;                   ///< declared last: withdrawn first
};

} // namespace nicer::libsystemd
