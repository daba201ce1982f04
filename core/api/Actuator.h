#pragma once

#include "api/Keywords.h"

#include <array>
#include <string_view>

namespace nicer::api {

/// What caps the work (actuator::QuotaActuator): nicerd's --actuator, the Actuator property and `nicer
/// status`. On the bus and in `nicer status --json` it is its keyword (kActuatorKeywords).
enum class Actuator {
    SystemdSlice,     ///< the CPU quota (cpu.max) of the work's systemd slice
    FreezerDutyCycle, ///< a duty cycle that freezes the work's cgroup (cgroup.freeze) part of the time
    SignalDutyCycle,  ///< a duty cycle that stops the work's processes (SIGSTOP, SIGCONT) part of the time
};

inline constexpr std::array<std::string_view, 3> kActuatorKeywords = {"systemd-slice", "freezer-duty-cycle",
                                                                      "signal-duty-cycle"};

/// On the bus, an actuator a client does not know (a newer nicerd's) reads as the slice's quota; the
/// ActuatorNote says how the work is capped less well, where it is.
template <>
struct BusKeywords<Actuator> {
    static constexpr const auto& keywords = kActuatorKeywords;
    static constexpr Actuator unknown = Actuator::SystemdSlice;
};

} // namespace nicer::api
