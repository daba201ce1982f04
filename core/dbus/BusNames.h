#pragma once

namespace nicer::dbus {

/// nicerd's well-known name, object and interface on the session bus (resources/org.nicer.Daemon1.xml).
inline constexpr const char* kBusName = "org.nicer.Daemon";
inline constexpr const char* kObjectPath = "/org/nicer/Daemon";
inline constexpr const char* kInterface = "org.nicer.Daemon1";
/// D-Bus signature of one history entry and of the Sample signal: time µs, idle, foreground, background,
/// quota, multiplier, overload count, paused.
inline constexpr const char* kSampleSignature = "tdddddub";

} // namespace nicer::dbus
