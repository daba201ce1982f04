#pragma once

// nicer's changes to BOINC's global preferences override (global_prefs_override.xml, read and written over
// the GUI RPC), with no I/O. The override is the volunteer's too: everything they set in it stays, and nicer
// sets only its own elements.
//
// Why these: with BOINC's defaults the client suspends all work while non-BOINC CPU use is above 25%
// (suspend_cpu_usage), while the computer is in use (run_if_user_active 0) or idle without input
// (suspend_if_no_recent_input), and cpu_usage_limit below 100 is a 1 s on/off duty cycle; max_ncpus_pct
// below 100 leaves cores idle. Each of these fights nicer's controller, which gives BOINC exactly the CPU
// the user's work leaves. The transfer limits are how nicer paces BOINC's downloads and uploads.

#include "util/Result.h"

#include <optional>
#include <string>
#include <string_view>

namespace nicer::boinc {

/**
 * @p userOverride (the override's text as the client has it; empty when there is none) with nicer's
 * settings: cpu_usage_limit 100, suspend_cpu_usage 0, max_ncpus_pct @p maxNcpusPct (100 but where the profile
 * in force runs fewer instances: maxNcpusPctFor), run_if_user_active 1 and suspend_if_no_recent_input 0.
 * Every other element, attribute and comment of the volunteer's stays; an element that appears twice is kept
 * once (the client would use the last one). Fails when @p userOverride is not well-formed XML or its root is
 * not <global_preferences>: the caller then leaves the volunteer's file as it is.
 */
Result<std::string> withNicerSettings(std::string_view userOverride, double maxNcpusPct = 100.0);

/// BOINC's max_ncpus_pct that lets its client run @p instances tasks of one CPU on @p cpus CPUs (0: all):
/// rounded up to a thousandth, since the client rounds the CPUs down (2 of 3 CPUs is 66.667, not 66.666).
double maxNcpusPctFor(int instances, int cpus);

/// @p override with max_bytes_sec_down and max_bytes_sec_up set to @p maxDownBytesPerSecond and
/// @p maxUpBytesPerSecond, rounded to whole bytes; 0 (or less) means no limit, as in BOINC. Everything else
/// stays. Fails like withNicerSettings().
Result<std::string> withTransferLimits(std::string_view override, double maxDownBytesPerSecond,
                                       double maxUpBytesPerSecond);

/// The transfer limits @p override holds (max_bytes_sec_down, max_bytes_sec_up, the last of each as the
/// client reads them), bytes per second; 0 where there is none, or the override cannot be read.
struct TransferCaps {
    double down = 0.0;
    double up = 0.0;
};
TransferCaps transferCapsOf(std::string_view override);

/// Whether @p override already holds nicer's settings, max_ncpus_pct @p maxNcpusPct among them (none: any
/// max_ncpus_pct, nicer's override of another profile) (the values, however written: "100" and "100.000000"
/// alike), so that nothing needs to be sent. False for an empty or unreadable override.
bool hasNicerSettings(std::string_view override, std::optional<double> maxNcpusPct = 100.0);

} // namespace nicer::boinc
