#include "daemon/PeriodTimer.h"

#include "actuator/BandwidthWindows.h"
#include "util/Log.h"

namespace nicer::daemon {

Result<std::unique_ptr<PeriodTimer>> PeriodTimer::create(sd_event* event, actuator::QuotaActuator& actuator,
                                                         std::chrono::milliseconds period, Tick tick,
                                                         Failed failed) {
    auto timer = std::unique_ptr<PeriodTimer>(new PeriodTimer(event, period, std::move(tick)));
    auto clock = libsystemd::Timer::create(event, [self = timer.get()] { self->onTimer(); });
    if (!clock) {
        return Error{"cannot start the period timer: " + clock.error().message};
    }
    timer->m_timer = std::move(*clock);
    timer->m_timer.setErrorHandler(std::move(failed));
    timer->m_timer.armIn(period);
    timer->setActuator(actuator);
    if (const auto window = actuator.bandwidthWindow();
        window && !actuator::periodStartsWindows(period, *window)) {
        log::warning()
            << "nicerd: the period (" << period.count() << " ms) is not a whole number of CPU "
            << "bandwidth windows (" << window->count() / 1000.0 << " ms, --quota-period): the quota "
            << "changes inside windows, where the kernel refills the work's budget, so the work may "
            << "get more than its quota";
    }
    return timer;
}

void PeriodTimer::setPeriod(std::chrono::milliseconds period) {
    // The next tick was armed with the old period: re-armed, or a shorter period would wait for it. The ticks
    // are off the kernel's window starts then, until they are found again.
    m_period = period;
    m_timer.armIn(period);
    if (m_alignment) {
        m_alignment->reset();
    }
}

void PeriodTimer::setActuator(actuator::QuotaActuator& actuator) {
    auto alignment = WindowAlignment::create(m_event, actuator, [this, &actuator](auto start) {
        if (const auto window = actuator.bandwidthWindow()) {
            alignTo(start, *window);
        }
    });
    m_alignment = alignment ? std::move(*alignment) : nullptr;
}

void PeriodTimer::onTimer() {
    // Armed before the tick, so that a tick that throws does not end the schedule.
    libsystemd::Timer::Time next = m_timer.due() + m_period;
    if (next <= m_timer.now()) {
        next = m_timer.now() + m_period; // fell behind (suspend, overload): skip rather than burst
        if (m_alignment) {
            m_alignment->reset(); // and off the kernel's window starts: find them again
        }
    }
    m_timer.armAt(next);
    m_tick();
    if (m_alignment) {
        m_alignment->onTick(m_period);
    }
}

void PeriodTimer::alignTo(libsystemd::Timer::Time windowStart, std::chrono::microseconds window) {
    // The period is a whole number of windows, so the window start nearest to the next tick serves, and the
    // fixed schedule keeps every later tick on a window start too.
    auto next = actuator::nearestWindowStart(windowStart, window, m_timer.due());
    while (next <= m_timer.now()) {
        next += window;
    }
    m_timer.armAt(next);
}

} // namespace nicer::daemon
