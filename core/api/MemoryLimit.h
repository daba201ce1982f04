#pragma once

namespace nicer::api {

/// MemoryHigh, where the kernel starts reclaiming the work's memory, as a share of MemoryMax: the work is
/// squeezed before it is OOM-killed inside its slice. nicerd sets it; `nicer status` and the tray say it.
inline constexpr double kMemoryHighShare = 0.9;

} // namespace nicer::api
