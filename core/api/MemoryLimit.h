#pragma once

namespace nicer::api {

// resources/CMakeLists.txt reads both figures from this file into resources/system/nicer.slice.in, which
// holds all users' work together to the limits each nicerd sets its own: keep the "= NUMBER;" form.

/// The work's memory limit (MemoryMax) by default, in percent of the machine: BOINC's default for "use at
/// most N% of memory when the computer is in use".
inline constexpr double kDefaultMemoryMaxPercent = 50.0;

/// MemoryHigh, where the kernel starts reclaiming the work's memory, as a share of MemoryMax: the work is
/// squeezed before it is OOM-killed inside its slice. nicerd sets it; `nicer status` and the tray say it.
inline constexpr double kMemoryHighShare = 0.9;

} // namespace nicer::api
