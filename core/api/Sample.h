#pragma once

#include "api/BusStruct.h"
#include "api/Keywords.h"
#include "control/Presence.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>

namespace nicer::api {

/// The part of @p foreground used by your programs, under your user manager: all of it when the part used
/// outside it (@p outside, -1 when unknown) is not known.
inline double yourPrograms(double foreground, double outside) {
    return outside >= 0.0 ? std::max(0.0, foreground - outside) : foreground;
}

/// On the bus the presence is its keyword; one a client does not know reads as unknown.
template <>
struct BusKeywords<control::Presence> {
    static constexpr const auto& keywords = control::kPresenceKeywords;
    static constexpr control::Presence unknown = control::Presence::Unknown;
};

/// A temperature that is no reading: there is no sensor.
inline constexpr double kNoTemperature = -273.15;

/// What one period of the loop saw and did; the D-Bus Sample signal and GetHistory carry these.
struct Sample {
    std::uint64_t timeUSec = 0; ///< wall clock (CLOCK_REALTIME), µs since the epoch
    double idle = 0.0;          ///< shares of the whole machine, 0..1: idle + foreground + background = 1
    double foreground = 0.0;
    double background = 0.0;
    /// The part of foreground used outside the user manager: other users and services (system services,
    /// containers, VMs, login sessions); the rest of foreground is your programs beside the work. -1 when
    /// nicerd cannot read the user manager's CPU time.
    double outside = -1.0;
    double quota = 0.0; ///< the work's cap as applied (0 while paused or stopped)
    double multiplier = 1.0;
    std::uint32_t overloadCount = 0;
    bool paused = false;
    /// The controller answered only the outside part (control::Signal::Outside), not the whole machine's
    /// idle.
    bool outsideSignal = false;
    /// The CPU's temperature in °C; kNoTemperature without a sensor.
    double temperature = kNoTemperature;
    /// The volunteer's rule that held the work under the controller's quota in this period
    /// (control::ruleName: "temperature", "fan", "battery", "power-saver", "game", "program"); empty for
    /// none.
    std::string heldBy;
    /// Whether the volunteer was at the machine (the profile in force: control::profileFor).
    control::Presence presence = control::Presence::Unknown;

    bool operator==(const Sample&) const = default;

    /// The Sample signal's arguments, with these names, and one entry of GetHistory's answer.
    static constexpr auto kBusFields = std::tuple{
        busField("time_usec", &Sample::timeUSec),      busField("idle", &Sample::idle),
        busField("foreground", &Sample::foreground),   busField("background", &Sample::background),
        busField("outside", &Sample::outside),         busField("quota", &Sample::quota),
        busField("multiplier", &Sample::multiplier),   busField("overload_count", &Sample::overloadCount),
        busField("paused", &Sample::paused),           busField("outside_signal", &Sample::outsideSignal),
        busField("temperature", &Sample::temperature), busField("held_by", &Sample::heldBy),
        busField("presence", &Sample::presence),
    };
};

} // namespace nicer::api
