#pragma once

#include "actuator/QuotaActuator.h"
#include "daemon/WindowAlignment.h"
#include "libsystemd/Timer.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string_view>

namespace nicer::daemon {

/**
 * The control loop's clock: a tick every period on a fixed schedule (the next one period after this one was
 * due, not after the work done; a schedule fallen behind, after a suspend, skips rather than bursts), moved
 * onto the kernel's CPU bandwidth windows where the actuator has them (WindowAlignment), so that each new
 * quota starts with a fresh window.
 */
class PeriodTimer {
public:
    using Tick = std::function<void()>;
    /// Why a tick failed (an exception out of it); the schedule goes on.
    using Failed = std::function<void(std::string_view what)>;

    /// Ticks every @p period on @p event, the first one period from now, aligned to @p actuator's windows.
    static Result<std::unique_ptr<PeriodTimer>> create(sd_event* event, actuator::QuotaActuator& actuator,
                                                       std::chrono::milliseconds period, Tick tick,
                                                       Failed failed);
    PeriodTimer(const PeriodTimer&) = delete;
    PeriodTimer& operator=(const PeriodTimer&) = delete;

    /// The next tick one new period from now; the windows are looked for again.
    void setPeriod(std::chrono::milliseconds period);
    /// Follows @p actuator's windows from now on (the daemon fell back to another actuator).
    void setActuator(actuator::QuotaActuator& actuator);

private:
    PeriodTimer(sd_event* event, std::chrono::milliseconds period, Tick tick)
        : m_event(event)
        , m_period(period)
        , m_tick(std::move(tick)) {}
    void onTimer();
    /// Moves the schedule onto the kernel's bandwidth windows, one of which started at @p windowStart.
    void alignTo(libsystemd::Timer::Time windowStart, std::chrono::microseconds window);

    sd_event* m_event;
    std::chrono::milliseconds m_period;
    Tick m_tick;
    libsystemd::Timer m_timer;
    std::unique_ptr<WindowAlignment> m_alignment;
};

} // namespace nicer::daemon
