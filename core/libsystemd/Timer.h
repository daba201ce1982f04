#pragma once

// One wrapper for sd-event's timer and defer sources, so that no code outside this layer converts durations
// to microseconds or writes its own exception guard at the C boundary (Source.h; I/O sources: IoSource.h).

#include "libsystemd/Source.h"
#include "util/Result.h"

#include <systemd/sd-event.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <memory>
#include <string_view>

namespace nicer::libsystemd {

/**
 * A one-shot timer on an sd-event loop. It starts disarmed; armIn() or armAt() arm it, and it fires once,
 * calling the callback from the loop. Re-arming an armed timer moves it. The callback may re-arm it, and may
 * destroy it. An exception from the callback goes to the error handler (if any) and never into sd-event.
 */
class Timer final : public detail::Source {
public:
    /// A point in time on the timer's clock, counted from that clock's epoch (as sd-event counts).
    using Time = std::chrono::microseconds;

    Timer() = default;
    /// A disarmed timer on @p clock (CLOCK_MONOTONIC, CLOCK_BOOTTIME, ...). @p accuracy lets sd-event
    /// coalesce wake-ups: a timer may fire up to that much late.
    static Result<Timer> create(sd_event* event, std::function<void()> callback,
                                clockid_t clock = CLOCK_MONOTONIC,
                                std::chrono::microseconds accuracy = std::chrono::milliseconds(1));

    /// Fires once, @p delay after the loop's current time (now()).
    template <typename Rep, typename Period>
    void armIn(std::chrono::duration<Rep, Period> delay) {
        armAt(now() + std::chrono::ceil<Time>(std::max(delay, std::chrono::duration<Rep, Period>::zero())));
    }
    /// Fires once, at @p when on the timer's clock (at once on the next iteration when that is past).
    void armAt(Time when);
    void disarm();
    bool armed() const;
    /// When it was last armed to fire (the time it fired at, inside the callback).
    Time due() const;
    /// The loop's time on this timer's clock: when the current iteration woke up (sd_event_now()).
    Time now() const;

private:
    using Source::Source;
};

/// Runs its callback once on the loop's next iteration after trigger(); triggering again before then does
/// nothing more. Like Timer, it may be destroyed from its callback and guards the C boundary.
class Defer final : public detail::Source {
public:
    Defer() = default;
    /// Starts idle.
    static Result<Defer> create(sd_event* event, std::function<void()> callback);

    void trigger();
    void cancel();
    bool pending() const;

private:
    using Source::Source;
};

} // namespace nicer::libsystemd
