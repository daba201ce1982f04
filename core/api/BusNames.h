#pragma once

#include <chrono>
#include <cstdint>

namespace nicer::api {

/// nicerd's well-known name, object and interface on the session bus (resources/org.nicer.Daemon1.xml).
inline constexpr const char* kBusName = "org.nicer.Daemon";
inline constexpr const char* kObjectPath = "/org/nicer/Daemon";
inline constexpr const char* kInterface = "org.nicer.Daemon1";
/// The version of the interface's signatures (its ApiVersion property; resources/org.nicer.Daemon1.xml has
/// what each version added). It changes whenever a signature does or a member is added.
inline constexpr std::uint32_t kApiVersion = 12;
/// The error of SetWorkloadPreset when the preset's program is not installed (or custom has no command).
inline constexpr const char* kWorkloadUnavailableError = "org.nicer.Daemon1.Error.WorkloadUnavailable";
/// The error of the Boinc* methods when no BOINC client runs under nicerd (or it does not answer yet).
inline constexpr const char* kBoincUnavailableError = "org.nicer.Daemon1.Error.BoincUnavailable";
/// How long nicerd waits for BOINC to finish an attach or an account manager's login (it fetches the
/// project's web site first) before it answers BoincAttach or BoincAttachAccountManager with an error.
inline constexpr std::chrono::seconds kBoincOperationLimit{120};
/// How long a client waits for nicerd's answer to the Boinc* methods: that limit and a margin for the calls
/// to BOINC before and after it.
inline constexpr std::chrono::seconds kBoincCallTimeout = kBoincOperationLimit + std::chrono::seconds(15);

// D-Bus signatures of the structs on the bus, written down once here; dbus/wire/Codec encodes and decodes
// them and resources/org.nicer.Daemon1.xml documents them.
/// One entry of the WorkloadPresets property: id, name, description, available.
inline constexpr const char* kPresetSignature = "sssb";
/// One history entry and the Sample signal: time µs, idle, foreground, background, outside, quota,
/// multiplier, overload count, paused, outside signal.
inline constexpr const char* kSampleSignature = "tddddddubbds";
/// One entry of the Downloads property: name, bytes done, total bytes (0: unknown), bytes per second, state
/// keyword, verified, reason, seconds until nicerd tries again (-1: it will not).
inline constexpr const char* kDownloadSignature = "sttdsbsx";
/// One entry of BoincProjects: URL, name, user credit, host credit, recent average credit, suspended, no new
/// tasks, attached through an account manager.
inline constexpr const char* kBoincProjectSignature = "ssdddbbb";
/// One entry of BoincTasks: name, project URL, state keyword, fraction done, elapsed s, remaining s, report
/// deadline (s since the epoch; 0: none), CPU s, elapsed-time limit s (0: not known).
inline constexpr const char* kBoincTaskSignature = "sssdddxdd";
/// One entry of BoincTransfers: file name, project URL, upload, total bytes, bytes done, bytes per second,
/// state keyword ("active" or "waiting").
inline constexpr const char* kBoincTransferSignature = "ssbddds";
/// One entry of BoincNotices: sequence number, time (s since the epoch), project name, title, text, error.
inline constexpr const char* kBoincNoticeSignature = "xxsssb";

} // namespace nicer::api
