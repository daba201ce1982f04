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
inline constexpr std::uint32_t kApiVersion = 16;
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

} // namespace nicer::api
