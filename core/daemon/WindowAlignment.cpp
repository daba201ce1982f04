#include "daemon/WindowAlignment.h"

#include <utility>

namespace nicer::daemon {

Result<std::unique_ptr<WindowAlignment>>
WindowAlignment::create(sd_event* event, actuator::QuotaActuator& actuator, Found found) {
    std::unique_ptr<WindowAlignment> self(new WindowAlignment(actuator, std::move(found)));
    auto timer = libsystemd::Timer::create(event, [raw = self.get()] { raw->onReading(); });
    if (!timer) {
        return Error{"cannot start the timer that finds the kernel's CPU bandwidth windows: " +
                     timer.error().message};
    }
    self->m_timer = std::move(*timer);
    return self;
}

void WindowAlignment::onTick(std::chrono::microseconds period) {
    const auto window = m_actuator.bandwidthWindow();
    if (m_probe || !window || !actuator::periodStartsWindows(period, *window) || m_actuator.frozen()) {
        return;
    }
    const Time now = m_timer.now();
    if (now < m_nextLook) {
        return;
    }
    m_probe.emplace();
    m_lookUntil = now + 2 * *window + kReadingInterval;
    onReading();
}

void WindowAlignment::reset() {
    m_timer.disarm();
    m_probe.reset();
    m_nextLook = {};
}

void WindowAlignment::onReading() {
    if (!m_probe) {
        return;
    }
    // The clock is read afresh, not the loop's time: the reading is stamped when it is made.
    const Time now = std::chrono::duration_cast<Time>(std::chrono::steady_clock::now().time_since_epoch());
    auto windows = m_actuator.bandwidthWindowsStarted();
    if (windows && m_probe->observe(now, *windows)) {
        const Time start = *m_probe->windowStart();
        m_probe.reset();
        m_nextLook = now + kLookAgainAfter;
        m_found(start);
        return;
    }
    if (!windows || now >= m_lookUntil) {
        // No count, or no window started (the work idle or frozen meanwhile): a look again later, as the
        // readings cost a little CPU.
        m_probe.reset();
        m_nextLook = now + kLookAgainAfterNothing;
        return;
    }
    m_timer.armAt(m_timer.now() + kReadingInterval);
}

} // namespace nicer::daemon
