#pragma once

// The GUI RPC replies that carry data, read into nicer's types (api/Boinc.h) with no I/O. Each parser takes
// one reply as ReplyBuffer::next() gives it (without the \003) and fails with an error that names the
// request and what was wrong: not XML, another root, BOINC's <error>, a missing or non-numeric field.
//
// The tags are those BOINC 7.20's client writes (client/gui_rpc_server_ops.cpp and the write_gui()
// functions it calls) and its own GUI reads (lib/gui_rpc_client_ops.cpp).

#include "api/Boinc.h"
#include "util/Result.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nicer::boinc {

/// How the volunteer set an activity (CPU, GPU, network) in BOINC's Activity menu.
enum class RunMode {
    Always, ///< run whatever the preferences say
    Auto,   ///< run as the preferences allow (the default)
    Never,  ///< suspended by the volunteer
};

/// "always", "auto" or "never".
std::string_view runModeName(RunMode mode);

/// The client's state as get_cc_status tells it.
struct CcStatus {
    /// Why the client suspended its tasks: BOINC's SUSPEND_REASON code (lib/common_defs.h), 0 when it
    /// runs them. 1024 is "the computer is busy", the one that fights nicer's controller.
    int taskSuspendReason = 0;
    /// taskSuspendReason in plain words (suspendReasonText); empty when the tasks are not suspended.
    std::string taskSuspendText;
    RunMode taskMode = RunMode::Auto;
    /// Why the client suspended its file transfers, as taskSuspendReason; 0 when it does not.
    int networkSuspendReason = 0;
    std::string networkSuspendText;
    RunMode networkMode = RunMode::Auto;

    bool tasksSuspended() const { return taskSuspendReason != 0; }
    bool networkSuspended() const { return networkSuspendReason != 0; }
    bool operator==(const CcStatus&) const = default;
};

/// A SUSPEND_REASON code in plain words, e.g. 1024: "the computer is busy (non-BOINC CPU use above the
/// limit)". The client sets one reason at a time, but the codes below 4096 are bits, so several are joined
/// with "; ". 0 is "". A code BOINC 7.20 does not define is named by its number.
std::string suspendReasonText(int reason);

/// Notices from get_notices: the new ones after the seqno asked for, oldest first.
struct NoticeBatch {
    std::vector<api::BoincNotice> notices;
    /// The client asked the GUI to forget every notice it has (it removed some, e.g. after a detach); the
    /// notices here are then all the client has.
    bool refresh = false;
};

/// The alerts and errors among the event log lines of get_messages, oldest first, as notices with error
/// set. The client posts every alert as a notice too (get_notices, category "client" or "scheduler"), so
/// they are kept apart: a caller that shows the notices adds only the errors.
struct MessageBatch {
    /// Lines of priority MSG_INTERNAL_ERROR (3), "[error] ...": problems with BOINC itself, a project or
    /// an account manager, which only the event log has.
    std::vector<api::BoincNotice> errors;
    /// Lines of priority MSG_USER_ALERT (2), which get_notices also gives (with "Message from server: "
    /// before a scheduler's text here).
    std::vector<api::BoincNotice> alerts;
    /// The highest seqno in the reply, errors or not: ask for the messages after it next time. The seqno
    /// asked for when the reply had no message.
    std::int64_t lastSeqno = 0;
};

/// How an operation that runs in the background (project_attach, acct_mgr_rpc) goes: the reply to its
/// _poll request.
struct OperationPoll {
    /// BOINC's error number: 0 done, -204 (ERR_IN_PROGRESS) still under way, anything else failed.
    int errorNum = 0;
    /// What the project or account manager said, if anything (e.g. "Invalid password").
    std::vector<std::string> messages;

    bool inProgress() const { return errorNum == -204; }
    bool succeeded() const { return errorNum == 0; }
    /// Plain words for a failed operation: the messages, else what the error number means.
    std::string describe() const;
};

/// What get_state tells of a task beyond get_results: when BOINC's clock aborts it, and what it computes on.
struct TaskLimits {
    /// The elapsed time at which the client aborts the task: its work unit's rsc_fpops_bound over its app
    /// version's flops, a bound under 120 s taken as 12 hours (client/app.cpp, MIN_TIME_BOUND).
    double elapsedLimitSeconds = 0.0;
    double cpus = 1.0; ///< the CPUs its app version uses (avg_ncpus)
    bool gpu = false;  ///< its app version uses a GPU (a <coproc>)
    bool operator==(const TaskLimits&) const = default;
};

/// The tasks of get_state by (project URL, result name).
using TaskLimitMap = std::map<std::pair<std::string, std::string>, TaskLimits>;

Result<CcStatus> parseCcStatus(std::string_view reply);
/// The limits of get_state's results; a result whose work unit or app version the reply lacks is left out.
Result<TaskLimitMap> parseTaskLimits(std::string_view reply);
Result<std::vector<api::BoincProject>> parseProjectStatus(std::string_view reply);
/// The tasks of get_results, with their state as one of the keywords of api::BoincTask::state.
Result<std::vector<api::BoincTask>> parseResults(std::string_view reply);
Result<std::vector<api::BoincTransfer>> parseFileTransfers(std::string_view reply);
Result<NoticeBatch> parseNotices(std::string_view reply);
/// @p seqno is the one asked for, returned as lastSeqno when there is nothing new.
Result<MessageBatch> parseMessages(std::string_view reply, std::int64_t seqno);
/// The override file's text as the client holds it (not parsed: a file the volunteer broke still comes
/// back as it is, for GlobalPrefsOverride to refuse), or "" when there is no override file.
Result<std::string> parseGlobalPrefsOverride(std::string_view reply);
/// @p rpc is "project_attach_poll" or "acct_mgr_rpc_poll".
Result<OperationPoll> parseOperationPoll(std::string_view reply, std::string_view rpc);

} // namespace nicer::boinc
