#pragma once

#include "api/BusStruct.h"
#include "api/Keywords.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace nicer::api {

/// How nicerd's BOINC client stands. On D-Bus, in `nicer boinc --json` and in the tray's words it is its
/// keyword (busKeyword).
enum class BoincState {
    Off,       ///< the boinc preset is not running
    Starting,  ///< the client does not answer yet
    Running,   ///< the client runs its tasks
    Suspended, ///< the client suspended its work itself (detail says why)
    Held,      ///< nicer holds the work and the client with it: the user's programs need every CPU, or the
               ///< work is paused (detail says which)
    Error,     ///< detail says what
};

inline constexpr std::array<std::string_view, 6> kBoincStateKeywords = {"off",       "starting", "running",
                                                                        "suspended", "held",     "error"};

/// On the bus, a keyword a client does not know (a newer nicerd's) reads as Error, whose detail says what it
/// is.
template <>
struct BusKeywords<BoincState> {
    static constexpr const auto& keywords = kBoincStateKeywords;
    static constexpr BoincState unknown = BoincState::Error;
};

/// Whether the client answers requests (attach, detach, the lists) in @p state: it runs, or it suspended its
/// own work.
constexpr bool boincAnswers(BoincState state) {
    return state == BoincState::Running || state == BoincState::Suspended;
}

/// One project the BOINC client is attached to (get_project_status), as nicerd shows it.
struct BoincProject {
    std::string url;           ///< the master URL, which names the project in attach and detach
    std::string name;          ///< e.g. "Einstein@Home"; empty until the client has fetched the master page
    double userCredit = 0.0;   ///< the volunteer's total credit in the project
    double hostCredit = 0.0;   ///< this computer's total credit
    double recentCredit = 0.0; ///< this computer's recent average credit (per day)
    bool suspended = false;    ///< suspended by the volunteer
    bool noMoreWork = false;   ///< "no new tasks"
    bool viaAccountManager = false; ///< attached through an account manager

    bool operator==(const BoincProject&) const = default;

    /// One entry of the BoincProjects property.
    static constexpr auto kBusFields = std::tuple{
        busField("url", &BoincProject::url),
        busField("name", &BoincProject::name),
        busField("user_credit", &BoincProject::userCredit),
        busField("host_credit", &BoincProject::hostCredit),
        busField("recent_credit", &BoincProject::recentCredit),
        busField("suspended", &BoincProject::suspended),
        busField("no_more_work", &BoincProject::noMoreWork),
        busField("via_account_manager", &BoincProject::viaAccountManager),
    };
};

/// What a BOINC task is doing. On D-Bus and in `nicer boinc --json` it is its keyword
/// (kBoincTaskStateKeywords).
enum class BoincTaskState {
    Downloading,   ///< its input files are on their way
    Ready,         ///< its files are there and it waits to start, or to go on after the client preempted it
    Running,       ///< its process executes
    Suspended,     ///< stopped by the volunteer, or by the client's own suspension (e.g. the computer is
                   ///< busy) while it was due to run
    Uploading,     ///< its result is on its way
    ReadyToReport, ///< uploaded, not yet reported to the project
    Reported,      ///< reported: done
    Error,         ///< a computation or upload error
    Aborted,       ///< aborted by the volunteer, the client or the project
};

inline constexpr std::array<std::string_view, 9> kBoincTaskStateKeywords = {
    "downloading",     "ready",    "running", "suspended", "uploading",
    "ready-to-report", "reported", "error",   "aborted"};

/// On the bus, a task state a client does not know (a newer nicerd's) reads as ready: waiting its turn.
template <>
struct BusKeywords<BoincTaskState> {
    static constexpr const auto& keywords = kBoincTaskStateKeywords;
    static constexpr BoincTaskState unknown = BoincTaskState::Ready;
};

/// Whether a task in @p state can still run, so that BOINC's clock of it goes on (its elapsed-time limit
/// matters): running, suspended or ready.
constexpr bool boincTaskCanRun(BoincTaskState state) {
    return state == BoincTaskState::Running || state == BoincTaskState::Suspended ||
           state == BoincTaskState::Ready;
}

/// One task (a BOINC result: a work unit and the app that computes it), from get_results.
struct BoincTask {
    std::string name;
    std::string projectUrl;
    BoincTaskState state = BoincTaskState::Ready; ///< what it is doing
    double fractionDone = 0.0;                    ///< 0..1
    double elapsedSeconds = 0.0;   ///< BOINC's elapsed time: the time it has run, by BOINC's clock
    double remainingSeconds = 0.0; ///< the client's estimate of the time left
    std::int64_t deadline = 0;     ///< the report deadline, seconds since the epoch (0: none given)
    double cpuSeconds = 0.0;       ///< the CPU time it has used (of a running or stopped task; else 0)
    /// The elapsed time at which BOINC aborts it ("exceeded elapsed time limit", exit status 197): its work
    /// unit's rsc_fpops_bound over its app version's speed (client/app.cpp). 0: not known yet.
    double elapsedLimitSeconds = 0.0;

    bool operator==(const BoincTask&) const = default;

    /// One entry of the BoincTasks property.
    static constexpr auto kBusFields = std::tuple{
        busField("name", &BoincTask::name),
        busField("project_url", &BoincTask::projectUrl),
        busField("state", &BoincTask::state),
        busField("fraction_done", &BoincTask::fractionDone),
        busField("elapsed_s", &BoincTask::elapsedSeconds),
        busField("remaining_s", &BoincTask::remainingSeconds),
        busField("deadline", &BoincTask::deadline),
        busField("cpu_s", &BoincTask::cpuSeconds),
        busField("elapsed_limit_s", &BoincTask::elapsedLimitSeconds),
    };
};

/// Whether a file transfer moves bytes now. On D-Bus and in `nicer boinc --json` it is its keyword.
enum class BoincTransferState {
    Active,  ///< bytes move
    Waiting, ///< for a retry after an error, a project's backoff, or a free slot
};

inline constexpr std::array<std::string_view, 2> kBoincTransferStateKeywords = {"active", "waiting"};

/// On the bus, a transfer state a client does not know (a newer nicerd's) reads as waiting.
template <>
struct BusKeywords<BoincTransferState> {
    static constexpr const auto& keywords = kBoincTransferStateKeywords;
    static constexpr BoincTransferState unknown = BoincTransferState::Waiting;
};

/// One file transfer the client has in progress or waiting (get_file_transfers).
struct BoincTransfer {
    std::string name;
    std::string projectUrl;
    bool upload = false;
    double bytesTotal = 0.0;
    double bytesDone = 0.0; ///< as far as the last attempt got (the client resumes from there)
    double rate = 0.0;      ///< bytes per second now; 0 while it waits
    BoincTransferState state = BoincTransferState::Waiting;

    bool operator==(const BoincTransfer&) const = default;

    /// One entry of the BoincTransfers property.
    static constexpr auto kBusFields = std::tuple{
        busField("name", &BoincTransfer::name),
        busField("project_url", &BoincTransfer::projectUrl),
        busField("upload", &BoincTransfer::upload),
        busField("bytes_total", &BoincTransfer::bytesTotal),
        busField("bytes_done", &BoincTransfer::bytesDone),
        busField("rate", &BoincTransfer::rate),
        busField("state", &BoincTransfer::state),
    };
};

/// A notice from the client or a project, or an error message, in plain words (get_notices, get_messages).
struct BoincNotice {
    std::int64_t seqno = 0;
    std::int64_t time = 0; ///< seconds since the epoch
    std::string project;   ///< the project's name; empty for the client's own notices
    std::string title;     ///< may be empty
    std::string text;      ///< plain text (BOINC's markup removed)
    /// An alert rather than news: the client's own notices and a project scheduler's messages to this
    /// computer, and the event log's lines of alert and error priority.
    bool error = false;

    bool operator==(const BoincNotice&) const = default;

    /// One entry of the BoincNotices property.
    static constexpr auto kBusFields = std::tuple{
        busField("seqno", &BoincNotice::seqno),     busField("time", &BoincNotice::time),
        busField("project", &BoincNotice::project), busField("title", &BoincNotice::title),
        busField("text", &BoincNotice::text),       busField("error", &BoincNotice::error),
    };
};

/// How nicerd's BOINC client stands, for the tray, `nicer status` and `nicer boinc`.
struct BoincStatus {
    BoincState state = BoincState::Off;
    std::string detail; ///< plain words for suspended and error; else empty
    /// When an enabled system-wide boinc-client.service is found: what that means and the one command that
    /// hands BOINC to nicer; else empty.
    std::string systemService;
    bool overrideApplied = false; ///< nicer's preferences override is in force in the client
    /// How nicer keeps BOINC's elapsed-time clock as fast as its tasks run (daemon/BoincClock.h), in plain
    /// words: "" while BOINC's clock runs as it would alone, else e.g. "kept: BOINC counted 24% of the last
    /// minute; its tasks ran at 22% of their CPUs".
    std::string clock;
    double maxDownRate = 0.0; ///< bytes/s last pushed into max_bytes_sec_down; 0: no limit
    double maxUpRate = 0.0;   ///< bytes/s last pushed into max_bytes_sec_up; 0: no limit
    std::vector<BoincProject> projects;
    std::vector<BoincTask> tasks;
    std::vector<BoincTransfer> transfers;
    std::vector<BoincNotice> notices;

    bool operator==(const BoincStatus&) const = default;
};

} // namespace nicer::api
