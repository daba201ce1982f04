#pragma once

#include <cstdint>

namespace nicer::api {

/// nicerd's well-known name, object and interface on the session bus (resources/org.nicer.Daemon1.xml).
inline constexpr const char* kBusName = "org.nicer.Daemon";
inline constexpr const char* kObjectPath = "/org/nicer/Daemon";
inline constexpr const char* kInterface = "org.nicer.Daemon1";
/// The version of the interface's signatures (its ApiVersion property). 2: the states of Downloads and the
/// bandwidth mode travel as separate fields (BandwidthCap) instead of sentences. 3: the BOINC client's
/// properties and methods (Boinc*). 4: the controller's MultiplierDecay. 5: ActuatorNote, and Actuator
/// announces its changes. 6: MemoryMaxPercent and MemoryMax, the work's memory limit. 7: LastError,
/// Downloads, DownloadRate and the Boinc* rates and lists announce their changes (PropertiesChanged with the
/// values, at most once a period), so that clients need not poll them. 8: a Sample carries the share used
/// outside the user manager and whether the controller answered only that part (Signal). 9: Placement and
/// PlacementNote, where the work runs (api/Placement.h). A property that
/// was not there in version 1 reads as 1.
inline constexpr std::uint32_t kApiVersion = 9;
/// The error of SetWorkloadPreset when the preset's program is not installed (or custom has no command).
inline constexpr const char* kWorkloadUnavailableError = "org.nicer.Daemon1.Error.WorkloadUnavailable";
/// The error of the Boinc* methods when no BOINC client runs under nicerd (or it does not answer yet).
inline constexpr const char* kBoincUnavailableError = "org.nicer.Daemon1.Error.BoincUnavailable";

// D-Bus signatures of the structs on the bus, written down once here; dbus/client/Codec encodes and decodes
// them and resources/org.nicer.Daemon1.xml documents them.
/// One entry of the WorkloadPresets property: id, name, description, available.
inline constexpr const char* kPresetSignature = "sssb";
/// One history entry and the Sample signal: time µs, idle, foreground, background, outside, quota,
/// multiplier, overload count, paused, outside signal.
inline constexpr const char* kSampleSignature = "tddddddubb";
/// One entry of the Downloads property: name, bytes done, total bytes (0: unknown), bytes per second, state
/// keyword, verified, reason, seconds until nicerd tries again (-1: it will not).
inline constexpr const char* kDownloadSignature = "sttdsbsx";
/// One entry of BoincProjects: URL, name, user credit, host credit, recent average credit, suspended, no new
/// tasks, attached through an account manager.
inline constexpr const char* kBoincProjectSignature = "ssdddbbb";
/// One entry of BoincTasks: name, project URL, state keyword, fraction done, elapsed s, remaining s, report
/// deadline (s since the epoch; 0: none).
inline constexpr const char* kBoincTaskSignature = "sssdddx";
/// One entry of BoincTransfers: file name, project URL, upload, total bytes, bytes done, bytes per second,
/// state keyword ("active" or "waiting").
inline constexpr const char* kBoincTransferSignature = "ssbddds";
/// One entry of BoincNotices: sequence number, time (s since the epoch), project name, title, text, error.
inline constexpr const char* kBoincNoticeSignature = "xxsssb";

} // namespace nicer::api
