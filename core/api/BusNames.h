#pragma once

namespace nicer::api {

/// nicerd's well-known name, object and interface on the session bus (resources/org.nicer.Daemon1.xml).
inline constexpr const char* kBusName = "org.nicer.Daemon";
inline constexpr const char* kObjectPath = "/org/nicer/Daemon";
inline constexpr const char* kInterface = "org.nicer.Daemon1";
/// The error of SetWorkloadPreset when the preset's program is not installed (or custom has no command).
inline constexpr const char* kWorkloadUnavailableError = "org.nicer.Daemon1.Error.WorkloadUnavailable";
/// D-Bus signature of one entry of the WorkloadPresets property: id, name, description, available.
inline constexpr const char* kPresetSignature = "sssb";
/// D-Bus signature of one history entry and of the Sample signal: time µs, idle, foreground, background,
/// quota, multiplier, overload count, paused.
inline constexpr const char* kSampleSignature = "tdddddub";
/// D-Bus signature of one entry of the Downloads property: name, bytes done, total bytes (0: unknown),
/// bytes per second, state.
inline constexpr const char* kDownloadSignature = "sttds";

} // namespace nicer::api
