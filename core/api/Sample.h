#pragma once

#include <cstdint>

namespace nicer::api {

/// What one period of the loop saw and did; the D-Bus Sample signal and GetHistory carry these.
struct Sample {
    std::uint64_t timeUSec = 0; ///< wall clock (CLOCK_REALTIME), µs since the epoch
    double idle = 0.0;          ///< shares of the whole machine, 0..1: idle + foreground + background = 1
    double foreground = 0.0;
    double background = 0.0;
    double quota = 0.0; ///< the work's cap as applied (0 while paused or stopped)
    double multiplier = 1.0;
    std::uint32_t overloadCount = 0;
    bool paused = false;
};

} // namespace nicer::api
