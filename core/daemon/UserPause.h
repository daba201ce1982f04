#pragma once

#include "api/DaemonState.h"
#include "daemon/ControlLoop.h"
#include "daemon/DaemonControl.h"
#include "libsystemd/Timer.h"
#include "util/Result.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace nicer::daemon {

/**
 * The volunteer's own pause of the loop's work: until `nicer resume`, or until a time (a snooze, `nicer pause
 * --for 1h`). It is kept across restarts of nicerd (an upgrade, a reboot) in a file (DaemonConfig::pauseFile)
 * whose presence means the work starts paused, and which holds the snooze's end when there is one. A timer on
 * the wall clock (CLOCK_REALTIME, so that a suspend or a clock set by NTP moves it with the clock), there
 * only while a snooze is in force, resumes the work when it ends; one that ended while nicerd was not running
 * ends at start. An empty path keeps nothing: the pause lasts while nicerd runs.
 *
 * The file is nicerd's own (in the user's state directory); one whose end cannot be read keeps the work
 * paused until `nicer resume`, the side that takes nothing from the volunteer, and the log says so.
 */
class UserPause {
public:
    /// @p onEnd is called from the loop after a snooze ended and the work was resumed, with the error of
    /// that resume if any.
    UserPause(sd_event* event, ControlLoop& loop, std::filesystem::path file,
              std::function<void(const Result<void>&)> onEnd)
        : m_event(event)
        , m_loop(loop)
        , m_file(std::move(file))
        , m_onEnd(std::move(onEnd)) {}
    UserPause(const UserPause&) = delete;
    UserPause& operator=(const UserPause&) = delete;

    /// At nicerd's start: pauses the loop again when the file holds a pause that has not ended by @p now, and
    /// removes a file whose snooze ended while nicerd was not running.
    Result<void> restore(std::chrono::system_clock::time_point now);
    /// Pauses the work until resume() or @p end, replacing a pause made before and its end; an @p end not
    /// after @p now is refused (InvalidInput). The error of keeping it says the pause holds only until nicerd
    /// restarts (it holds all the same).
    Result<void> pause(PauseEnd end, std::chrono::system_clock::time_point now);
    /// The controller takes over again; the error says the work would start paused after a restart, and
    /// what to do.
    Result<void> resume();
    /// Its part of the daemon's state: when the pause ends (the loop says whether the work is paused).
    void describe(api::DaemonState& state) const;

private:
    /// Keeps m_end in the file and arms its timer: made only while a snooze is in force, so that a nicerd
    /// never snoozed has no timer on the wall clock at all.
    Result<void> keep();
    void onTimer();

    sd_event* m_event;
    ControlLoop& m_loop;
    std::filesystem::path m_file;
    std::function<void(const Result<void>&)> m_onEnd;
    libsystemd::Timer m_timer;
    PauseEnd m_end;
};

/// The file's text for a pause ending at @p end, and the end read back from such a text (an older nicerd's
/// file, one sentence, holds until resume); the error says what could not be read. Pure, for the tests.
std::string pauseFileText(PauseEnd end);
Result<PauseEnd> readPauseFileText(std::string_view text, const std::string& source);

} // namespace nicer::daemon
