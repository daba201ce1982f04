#pragma once

#include "util/WallClock.h"

#include <cstdint>
#include <string>

namespace nicer::presence {

/**
 * Publishes the volunteer's last input in BOINC's /idle_detect_shmem: two native int64, the time of the
 * update and the time of the last input, in seconds since 1970. BOINC takes it while the update is at most 60
 * s old, and then counts its own "in use" from the last input; without an update for a minute it falls back
 * to its own detection. So nicer's verdict reaches a system-wide BOINC client (the user boinc), which cannot
 * read the volunteer's desktop itself, on Wayland too.
 *
 * The object is the volunteer's own: created 0644 (BOINC, another user, reads it), written only when it is a
 * regular file of nicerd's user. One of another user's (a second volunteer's nicerd, idle_detect's daemon, or
 * someone squatting the name: /dev/shm is open to all) is left alone, and note() says whose it is. It is
 * never unlinked: BOINC maps the object once and keeps that mapping, so a new object under the same name
 * would never reach it; when nicerd stops publishing, the update time stops and BOINC ignores the object a
 * minute later.
 */
class IdleDetectShmem {
public:
    /// @p name: "/idle_detect_shmem", the one BOINC's client reads since 8.2.10 for its "in use"
    /// (client/hostinfo_unix.cpp, get_idle_time_from_daemon), or a test's own.
    explicit IdleDetectShmem(std::string name)
        : m_name(std::move(name)) {}
    ~IdleDetectShmem();
    IdleDetectShmem(const IdleDetectShmem&) = delete;
    IdleDetectShmem& operator=(const IdleDetectShmem&) = delete;

    /// Writes @p lastInput as of @p now, opening (or creating) the object on the first call and again after a
    /// refusal at most once a minute.
    void publish(wallclock::TimePoint now, wallclock::TimePoint lastInput);
    /// Whether the last publish() reached the object.
    bool publishing() const { return m_map != nullptr; }
    /// Where it publishes, or why it does not ("/dev/shm/idle_detect_shmem belongs to user bob (uid 1001)").
    const std::string& note() const { return m_note; }

private:
    void open(wallclock::TimePoint now);

    std::string m_name;
    std::int64_t* m_map = nullptr;
    std::string m_note;
    wallclock::TimePoint m_lastTry{};
};

} // namespace nicer::presence
