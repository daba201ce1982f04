#pragma once

// A time zone for nicerd (its TZ) in which the local time now is a time of day of the test's choosing, to the
// second: a POSIX TZ rule with an offset in hours, minutes and seconds. nicerd reads the schedule's hours in
// its local time, so that its real wall clock, its timers and the kernel stay as they are while a test puts
// an hour's edge a few seconds ahead. (libfaketime, which offsets the clock itself, also rewrites the
// expirations of sd-event's CLOCK_MONOTONIC timerfds, which the kernel then refuses: EINVAL.)

#include <chrono>
#include <cstdio>
#include <string>

namespace nicer::test {

class LocalTimeZone {
public:
    /// The zone in which it is @p hour:@p minute:@p second now.
    LocalTimeZone(int hour, int minute, int second)
        : m_made(std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()))
        , m_start(hour * 3600LL + minute * 60LL + second) {
        const long long now =
            std::chrono::duration_cast<std::chrono::seconds>(m_made.time_since_epoch()).count() % 86400;
        // POSIX counts the offset west of Greenwich: local = UTC - offset.
        long long offset = ((now - m_start) % 86400 + 86400) % 86400;
        if (offset > 43200) {
            offset -= 86400;
        }
        const long long size = offset < 0 ? -offset : offset;
        char text[40];
        std::snprintf(text, sizeof text, "NCR%c%02lld:%02lld:%02lld", offset < 0 ? '-' : '+', size / 3600,
                      size / 60 % 60, size % 60);
        m_tz = text;
    }

    /// TZ's value.
    const std::string& tz() const { return m_tz; }
    /// The real time at which the local time is @p hour:@p minute:@p second (within the day after it was
    /// made).
    std::chrono::system_clock::time_point at(int hour, int minute, int second) const {
        const long long ahead = ((hour * 3600LL + minute * 60LL + second) - m_start + 86400) % 86400;
        return m_made + std::chrono::seconds(ahead);
    }

private:
    std::chrono::system_clock::time_point m_made; ///< to the second, as the zone's offset
    long long m_start;                            ///< the local second of the day when made
    std::string m_tz;
};

} // namespace nicer::test
