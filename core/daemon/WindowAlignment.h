#pragma once

#include "actuator/BandwidthWindows.h"
#include "actuator/QuotaActuator.h"
#include "libsystemd/Timer.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace nicer::daemon {

/**
 * Puts nicerd's period ticks, where it changes the quota, at the start of the kernel's CPU bandwidth windows
 * (actuator/BandwidthWindows.h: a change inside a window lets the work exceed its quota). While the work
 * runs, it reads the kernel's count of windows every few milliseconds until the count moves, for at most
 * two windows, and then hands the daemon a time at which a window started. It looks again every ten
 * minutes (30 s after a look that saw no window start), and after the window or the period changed.
 *
 * Where the actuator has no windows (the duty cycle), or the period is not a whole number of windows (an
 * explicit --quota-period), it does nothing.
 */
class WindowAlignment {
public:
    using Time = libsystemd::Timer::Time;
    /// Gets a time on CLOCK_MONOTONIC at which a window started.
    using Found = std::function<void(Time windowStart)>;

    static Result<std::unique_ptr<WindowAlignment>> create(sd_event* event, actuator::QuotaActuator& actuator,
                                                           Found found);
    WindowAlignment(const WindowAlignment&) = delete;
    WindowAlignment& operator=(const WindowAlignment&) = delete;

    /// Called at every tick of the period: starts a look when one is due and can see the windows (the work
    /// runs, as the kernel counts windows only then).
    void onTick(std::chrono::microseconds period);
    /// Forgets where the windows start: the window or the period changed.
    void reset();

    static constexpr std::chrono::milliseconds kReadingInterval{4};
    static constexpr std::chrono::minutes kLookAgainAfter{10};
    static constexpr std::chrono::seconds kLookAgainAfterNothing{30};

private:
    WindowAlignment(actuator::QuotaActuator& actuator, Found found)
        : m_actuator(actuator)
        , m_found(std::move(found)) {}
    void onReading();

    actuator::QuotaActuator& m_actuator;
    Found m_found;
    libsystemd::Timer m_timer;
    std::optional<actuator::WindowStartProbe> m_probe;
    Time m_lookUntil{};
    Time m_nextLook{};
};

} // namespace nicer::daemon
