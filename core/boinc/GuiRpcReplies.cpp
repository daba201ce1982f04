#include "boinc/GuiRpcReplies.h"

#include "boinc/NoticeText.h"
#include "boinc/ReplyXml.h"
#include "util/Text.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>

namespace nicer::boinc {

namespace {

using detail::Fields;

// lib/common_defs.h: RESULT::state in the client.
enum ResultState {
    kResultNew = 0,
    kFilesDownloading = 1,
    kFilesDownloaded = 2,
    kComputeError = 3,
    kFilesUploading = 4,
    kFilesUploaded = 5,
    kAborted = 6,
    kUploadFailed = 7,
};

// lib/common_defs.h: ACTIVE_TASK::task_state and scheduler_state.
constexpr int kProcessExecuting = 1;
constexpr int kProcessSuspended = 9;
constexpr int kProcessUninitialized = 0;
constexpr int kCpuSchedScheduled = 2;

// lib/common_defs.h: message priorities.
constexpr std::int64_t kMsgUserAlert = 2;
constexpr std::int64_t kMsgInternalError = 3;

// lib/common_defs.h: SUSPEND_REASON. The codes from 4096 on are values, not bits.
struct SuspendReason {
    int code;
    std::string_view text;
};
constexpr std::array kSuspendReasons{
    SuspendReason{1, "the computer is on batteries"},
    SuspendReason{2, "the computer is in use"},
    SuspendReason{4, "suspended by the volunteer (BOINC's activity is set to suspend)"},
    SuspendReason{8, "outside the hours the preferences allow"},
    SuspendReason{16, "BOINC is running its CPU benchmarks"},
    SuspendReason{32, "BOINC's disk space limit is reached"},
    SuspendReason{64, "CPU throttling (the preferences' CPU usage limit below 100%)"},
    SuspendReason{128, "no recent keyboard or mouse input"},
    SuspendReason{256, "BOINC's start-up delay"},
    SuspendReason{512, "an exclusive application is running"},
    SuspendReason{1024, "the computer is busy (non-BOINC CPU use above the limit)"},
    SuspendReason{2048, "the network transfer limit is used up"},
    SuspendReason{4096, "the operating system asked for it"},
    SuspendReason{4097, "the computer is not on WiFi"},
    SuspendReason{4098, "the battery is charging"},
    SuspendReason{4099, "the battery is too hot"},
    SuspendReason{4100, "no GUI keeps the client alive"},
};

Result<RunMode> runMode(const Fields& fields, const char* name, std::string_view rpc) {
    auto value = fields.integer(name, true);
    if (!value) {
        return value.error();
    }
    switch (*value) {
    case 1:
        return RunMode::Always;
    case 2:
        return RunMode::Auto;
    case 3:
        return RunMode::Never;
    default:
        return detail::replyError(rpc, "has <" + std::string(name) + ">" + std::to_string(*value) + "</" +
                                           name + ">, which is no run mode (1 always, 2 auto, 3 never)");
    }
}

std::string where(std::string_view element, std::size_t index) {
    return "<" + std::string(element) + "> number " + std::to_string(index + 1);
}

// The task's state (api::BoincTask::state) from the result's state and, while it has a process or a slot,
// its active task. The client shows "running" only for a process that executes; a process stopped while
// the CPU scheduler still wants it to run is stopped by a client-wide suspension, and one the scheduler
// preempted (or never started) waits its turn: "ready".
struct TaskFacts {
    std::int64_t state = 0;
    bool readyToReport = false;
    bool gotServerAck = false;
    bool suspendedViaGui = false;
    bool hasActiveTask = false;
    std::int64_t activeTaskState = 0;
    std::int64_t schedulerState = 0;
};

Result<api::BoincTaskState> taskState(const TaskFacts& task, std::string_view whereText) {
    switch (task.state) {
    case kResultNew:
    case kFilesDownloading:
        return api::BoincTaskState::Downloading;
    case kFilesDownloaded:
        if (task.suspendedViaGui) {
            return api::BoincTaskState::Suspended;
        }
        if (task.hasActiveTask) {
            if (task.activeTaskState == kProcessExecuting) {
                return api::BoincTaskState::Running;
            }
            if ((task.activeTaskState == kProcessSuspended ||
                 task.activeTaskState == kProcessUninitialized) &&
                task.schedulerState == kCpuSchedScheduled) {
                return api::BoincTaskState::Suspended;
            }
        }
        return api::BoincTaskState::Ready;
    case kComputeError:
    case kUploadFailed:
        return api::BoincTaskState::Error;
    case kFilesUploading:
        return api::BoincTaskState::Uploading;
    case kFilesUploaded:
        return task.gotServerAck ? api::BoincTaskState::Reported : api::BoincTaskState::ReadyToReport;
    case kAborted:
        return api::BoincTaskState::Aborted;
    default:
        return detail::replyError("get_results", "has " + std::string(whereText) + " with <state>" +
                                                     std::to_string(task.state) +
                                                     "</state>, which BOINC 7.20 does not define");
    }
}

Result<api::BoincTask> parseTask(pugi::xml_node node, std::size_t index) {
    const std::string at = where("result", index);
    const Fields fields(node, "get_results", at);
    api::BoincTask task;
    TaskFacts facts;
    auto name = fields.text("name", true);
    auto url = fields.text("project_url", true);
    auto state = fields.integer("state", true);
    auto deadline = fields.integer("report_deadline", false);
    auto remaining = fields.number("estimated_cpu_time_remaining", false);
    auto finalElapsed = fields.number("final_elapsed_time", false);
    auto finalCpu = fields.number("final_cpu_time", false);
    if (const Error* error =
            detail::firstError(name, url, state, deadline, remaining, finalElapsed, finalCpu)) {
        return *error;
    }
    task.name = std::move(*name);
    task.projectUrl = std::move(*url);
    task.deadline = *deadline;
    task.remainingSeconds = std::max(*remaining, 0.0);
    task.elapsedSeconds = *finalElapsed;
    task.cpuSeconds = *finalCpu;
    facts.state = *state;
    facts.readyToReport = detail::flag(node, "ready_to_report");
    facts.gotServerAck = detail::flag(node, "got_server_ack");
    facts.suspendedViaGui =
        detail::flag(node, "suspended_via_gui") || detail::flag(node, "project_suspended_via_gui");

    if (const pugi::xml_node active = node.child("active_task")) {
        const Fields activeFields(active, "get_results", "the <active_task> of " + at);
        auto activeState = activeFields.integer("active_task_state", true);
        auto scheduler = activeFields.integer("scheduler_state", false);
        auto fraction = activeFields.number("fraction_done", false);
        auto elapsed = activeFields.number("elapsed_time", false);
        auto cpu = activeFields.number("current_cpu_time", false);
        if (const Error* error = detail::firstError(activeState, scheduler, fraction, elapsed, cpu)) {
            return *error;
        }
        facts.hasActiveTask = true;
        facts.activeTaskState = *activeState;
        facts.schedulerState = *scheduler;
        task.fractionDone = std::clamp(*fraction, 0.0, 1.0);
        task.elapsedSeconds = *elapsed;
        task.cpuSeconds = *cpu;
    }
    auto doing = taskState(facts, at);
    if (!doing) {
        return doing.error();
    }
    task.state = *doing;
    if (facts.state == kFilesUploading || facts.state == kFilesUploaded) {
        task.fractionDone = 1.0;
        task.remainingSeconds = 0.0;
    }
    return task;
}

Result<api::BoincProject> parseProject(pugi::xml_node node, std::size_t index) {
    const Fields fields(node, "get_project_status", where("project", index));
    api::BoincProject project;
    auto url = fields.text("master_url", true);
    if (!url) {
        return url.error();
    }
    project.url = std::move(*url);
    project.name = std::string(detail::textOf(node.child("project_name")));
    for (auto [name, field] : {std::pair{"user_total_credit", &project.userCredit},
                               std::pair{"host_total_credit", &project.hostCredit},
                               std::pair{"host_expavg_credit", &project.recentCredit}}) {
        auto value = fields.number(name, false);
        if (!value) {
            return value.error();
        }
        *field = *value;
    }
    project.suspended = detail::flag(node, "suspended_via_gui");
    project.noMoreWork = detail::flag(node, "dont_request_more_work");
    project.viaAccountManager = detail::flag(node, "attached_via_acct_mgr");
    return project;
}

Result<api::BoincTransfer> parseTransfer(pugi::xml_node node, std::size_t index) {
    const std::string at = where("file_transfer", index);
    const Fields fields(node, "get_file_transfers", at);
    api::BoincTransfer transfer;
    auto name = fields.text("name", true);
    auto url = fields.text("project_url", true);
    auto total = fields.number("nbytes", false);
    if (const Error* error = detail::firstError(name, url, total)) {
        return *error;
    }
    transfer.name = std::move(*name);
    transfer.projectUrl = std::move(*url);
    transfer.bytesTotal = std::max(*total, 0.0);

    // The persistent transfer lives as long as the file needs moving; it has a <file_xfer> (an HTTP
    // operation) only while bytes move, and none while it waits for a retry, a backoff or a free slot.
    const pugi::xml_node persistent = node.child("persistent_file_xfer");
    if (!persistent) {
        return detail::replyError("get_file_transfers", "has " + at + " with no <persistent_file_xfer>");
    }
    const Fields persistentFields(persistent, "get_file_transfers", "the <persistent_file_xfer> of " + at);
    auto done = persistentFields.number("last_bytes_xferred", false);
    if (!done) {
        return done.error();
    }
    transfer.upload = detail::flag(persistent, "is_upload");
    transfer.bytesDone = std::max(*done, 0.0);
    transfer.state = api::BoincTransferState::Waiting;
    if (const pugi::xml_node active = node.child("file_xfer")) {
        const Fields activeFields(active, "get_file_transfers", "the <file_xfer> of " + at);
        auto speed = activeFields.number("xfer_speed", false);
        auto moved = activeFields.number("bytes_xferred", false);
        auto offset = activeFields.number("file_offset", false);
        if (const Error* error = detail::firstError(speed, moved, offset)) {
            return *error;
        }
        transfer.rate = std::max(*speed, 0.0);
        transfer.state = api::BoincTransferState::Active;
        // last_bytes_xferred is copied from the HTTP operation only when the client polls its transfers,
        // and lags (a recording shows 0 after 20 MB): the operation's own count is the fresh one.
        // PERS_FILE_XFER::poll() adds the offset for uploads; a download's count starts at its offset.
        transfer.bytesDone = std::max(transfer.bytesDone, *moved + (transfer.upload ? *offset : 0.0));
    }
    if (transfer.bytesTotal > 0.0) {
        transfer.bytesDone = std::min(transfer.bytesDone, transfer.bytesTotal);
    }
    return transfer;
}

api::BoincNotice noticeOf(pugi::xml_node node, std::int64_t seqno, std::int64_t createTime,
                          std::int64_t arrivalTime) {
    api::BoincNotice notice;
    notice.seqno = seqno;
    notice.time = createTime > 0 ? createTime : arrivalTime;
    notice.project = htmlToPlainText(detail::textOf(node.child("project_name")));
    notice.title = htmlToPlainText(stripTranslation(detail::textOf(node.child("title"))));
    notice.text = htmlToPlainText(stripTranslation(node.child_value("description")));
    // "client": the client's own alerts (MSG_USER_ALERT); "scheduler": a project's scheduler telling this
    // computer something. Anything else comes from a project's news feed.
    const std::string_view category = detail::textOf(node.child("category"));
    notice.error = category == "client" || category == "scheduler";
    return notice;
}

} // namespace

std::string_view runModeName(RunMode mode) {
    switch (mode) {
    case RunMode::Always:
        return "always";
    case RunMode::Never:
        return "never";
    case RunMode::Auto:
        break;
    }
    return "auto";
}

std::string suspendReasonText(int reason) {
    if (reason == 0) {
        return {};
    }
    for (const SuspendReason& known : kSuspendReasons) {
        if (known.code == reason) {
            return std::string(known.text);
        }
    }
    std::string text;
    int rest = reason;
    if (reason > 0 && reason < 4096) {
        for (const SuspendReason& known : kSuspendReasons) {
            if (known.code < 4096 && (reason & known.code) != 0) {
                text += (text.empty() ? "" : "; ") + std::string(known.text);
                rest &= ~known.code;
            }
        }
    }
    if (rest != 0) {
        text += (text.empty() ? "" : "; ") + ("an unknown reason (BOINC code " + std::to_string(rest) + ")");
    }
    return text;
}

std::string OperationPoll::describe() const {
    std::string text;
    for (const std::string& message : messages) {
        text += (text.empty() ? "" : "; ") + message;
    }
    if (errorNum == 0 || (!text.empty() && errorNum == -1)) {
        return text;
    }
    // lib/error_numbers.h: the ones an attach or an account manager's answer brings.
    std::string_view meaning;
    switch (errorNum) {
    case -204:
        meaning = "still in progress";
        break;
    case -113:
        meaning = "the server's name could not be resolved";
        break;
    case -107:
    case -184:
        meaning = "the server could not be reached; it may be down for now";
        break;
    case -224:
        meaning = "the server answered with an HTTP error";
        break;
    case -183:
        meaning = "the project is down";
        break;
    case -136:
        meaning = "no such account";
        break;
    case -155:
    case -212:
        meaning = "the account key was not accepted";
        break;
    case -206:
        meaning = "wrong password";
        break;
    case -188:
        meaning = "wrong user name";
        break;
    case -189:
        meaning = "the URL is not valid";
        break;
    case -130:
        meaning = "already attached to the project";
        break;
    case -210:
    case -211:
        meaning = "the project's files could not be fetched or read";
        break;
    default:
        break;
    }
    std::string code = "BOINC error " + std::to_string(errorNum);
    if (!meaning.empty()) {
        code += ": " + std::string(meaning);
    }
    return text.empty() ? code : text + " (" + code + ")";
}

Result<CcStatus> parseCcStatus(std::string_view reply) {
    constexpr std::string_view kRpc = "get_cc_status";
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, kRpc);
    if (!root) {
        return root.error();
    }
    auto node = detail::answer(*root, "cc_status", kRpc);
    if (!node) {
        return node.error();
    }
    const Fields fields(*node, kRpc, "<cc_status>");
    auto taskReason = fields.integer("task_suspend_reason", true);
    auto networkReason = fields.integer("network_suspend_reason", true);
    auto taskMode = runMode(fields, "task_mode", kRpc);
    auto networkMode = runMode(fields, "network_mode", kRpc);
    if (!taskReason) {
        return taskReason.error();
    }
    if (!networkReason) {
        return networkReason.error();
    }
    if (!taskMode) {
        return taskMode.error();
    }
    if (!networkMode) {
        return networkMode.error();
    }
    CcStatus status;
    status.taskSuspendReason = static_cast<int>(*taskReason);
    status.taskSuspendText = suspendReasonText(status.taskSuspendReason);
    status.taskMode = *taskMode;
    status.networkSuspendReason = static_cast<int>(*networkReason);
    status.networkSuspendText = suspendReasonText(status.networkSuspendReason);
    status.networkMode = *networkMode;
    return status;
}

Result<std::vector<api::BoincProject>> parseProjectStatus(std::string_view reply) {
    constexpr std::string_view kRpc = "get_project_status";
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, kRpc);
    if (!root) {
        return root.error();
    }
    auto node = detail::answer(*root, "projects", kRpc);
    if (!node) {
        return node.error();
    }
    std::vector<api::BoincProject> projects;
    for (const pugi::xml_node child : node->children("project")) {
        auto project = parseProject(child, projects.size());
        if (!project) {
            return project.error();
        }
        projects.push_back(std::move(*project));
    }
    return projects;
}

Result<std::vector<api::BoincTask>> parseResults(std::string_view reply) {
    constexpr std::string_view kRpc = "get_results";
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, kRpc);
    if (!root) {
        return root.error();
    }
    auto node = detail::answer(*root, "results", kRpc);
    if (!node) {
        return node.error();
    }
    std::vector<api::BoincTask> tasks;
    for (const pugi::xml_node child : node->children("result")) {
        auto task = parseTask(child, tasks.size());
        if (!task) {
            return task.error();
        }
        tasks.push_back(std::move(*task));
    }
    return tasks;
}

Result<TaskLimitMap> parseTaskLimits(std::string_view reply) {
    constexpr std::string_view kRpc = "get_state";
    // client/client_state.h: a bound that gives less than this is a project's mistake, taken as 12 hours.
    constexpr double kMinTimeBound = 120.0;
    constexpr double kDefaultTimeBound = 43200.0;
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, kRpc);
    if (!root) {
        return root.error();
    }
    auto state = detail::answer(*root, "client_state", kRpc);
    if (!state) {
        return state.error();
    }
    // Each project's apps, app versions, work units and results follow its <project> (client_state.cpp
    // write_state_gui), so names are looked up within the project they follow.
    struct Version {
        double flops = 0.0;
        TaskLimits limits;
    };
    std::map<std::tuple<std::string, std::int64_t, std::string>, Version> versions; // app, version, plan
    std::map<std::string, std::pair<std::string, double>> workunits;                // name -> app, bound
    TaskLimitMap tasks;
    std::size_t versionIndex = 0, workunitIndex = 0, resultIndex = 0;
    for (const pugi::xml_node child : state->children()) {
        const std::string_view element = child.name();
        if (element == "project") {
            versions.clear();
            workunits.clear();
        } else if (element == "app_version") {
            const Fields fields(child, kRpc, where("app_version", versionIndex++));
            auto app = fields.text("app_name", true);
            auto number = fields.integer("version_num", true);
            auto flops = fields.number("flops", true);
            auto cpus = fields.number("avg_ncpus", false, 1.0);
            if (const Error* error = detail::firstError(app, number, flops, cpus)) {
                return *error;
            }
            Version version{*flops, TaskLimits{0.0, *cpus, static_cast<bool>(child.child("coproc"))}};
            versions[{*app, *number, std::string(detail::textOf(child.child("plan_class")))}] = version;
        } else if (element == "workunit") {
            const Fields fields(child, kRpc, where("workunit", workunitIndex++));
            auto name = fields.text("name", true);
            auto app = fields.text("app_name", true);
            auto bound = fields.number("rsc_fpops_bound", true);
            if (const Error* error = detail::firstError(name, app, bound)) {
                return *error;
            }
            workunits[*name] = {*app, *bound};
        } else if (element == "result") {
            const Fields fields(child, kRpc, where("result", resultIndex++));
            auto name = fields.text("name", true);
            auto url = fields.text("project_url", true);
            auto wu = fields.text("wu_name", true);
            auto number = fields.integer("version_num", true);
            if (const Error* error = detail::firstError(name, url, wu, number)) {
                return *error;
            }
            const auto workunit = workunits.find(*wu);
            if (workunit == workunits.end()) {
                continue;
            }
            const auto version = versions.find(
                {workunit->second.first, *number, std::string(detail::textOf(child.child("plan_class")))});
            if (version == versions.end() || version->second.flops <= 0.0) {
                continue;
            }
            TaskLimits limits = version->second.limits;
            limits.elapsedLimitSeconds = workunit->second.second / version->second.flops;
            if (limits.elapsedLimitSeconds < kMinTimeBound) {
                limits.elapsedLimitSeconds = kDefaultTimeBound;
            }
            tasks[{*url, *name}] = limits;
        }
    }
    return tasks;
}

Result<std::vector<api::BoincTransfer>> parseFileTransfers(std::string_view reply) {
    constexpr std::string_view kRpc = "get_file_transfers";
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, kRpc);
    if (!root) {
        return root.error();
    }
    auto node = detail::answer(*root, "file_transfers", kRpc);
    if (!node) {
        return node.error();
    }
    std::vector<api::BoincTransfer> transfers;
    for (const pugi::xml_node child : node->children("file_transfer")) {
        auto transfer = parseTransfer(child, transfers.size());
        if (!transfer) {
            return transfer.error();
        }
        transfers.push_back(std::move(*transfer));
    }
    return transfers;
}

Result<NoticeBatch> parseNotices(std::string_view reply) {
    constexpr std::string_view kRpc = "get_notices";
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, kRpc);
    if (!root) {
        return root.error();
    }
    auto node = detail::answer(*root, "notices", kRpc);
    if (!node) {
        return node.error();
    }
    NoticeBatch batch;
    std::size_t index = 0;
    for (const pugi::xml_node child : node->children("notice")) {
        const Fields fields(child, kRpc, where("notice", index++));
        auto seqno = fields.integer("seqno", true);
        // Written with "%f"; read as whole seconds, in range (an integer field refuses 1e300).
        auto created = fields.integer("create_time", false);
        auto arrived = fields.integer("arrival_time", false);
        if (const Error* error = detail::firstError(seqno, created, arrived)) {
            return *error;
        }
        if (*seqno == -1) {
            // NOTICES::write() sends this empty notice first, then every notice it has.
            batch.refresh = true;
            batch.notices.clear();
            continue;
        }
        batch.notices.push_back(noticeOf(child, *seqno, *created, *arrived));
    }
    std::stable_sort(batch.notices.begin(), batch.notices.end(),
                     [](const api::BoincNotice& a, const api::BoincNotice& b) { return a.seqno < b.seqno; });
    return batch;
}

Result<MessageBatch> parseMessages(std::string_view reply, std::int64_t seqno) {
    constexpr std::string_view kRpc = "get_messages";
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, kRpc);
    if (!root) {
        return root.error();
    }
    auto node = detail::answer(*root, "msgs", kRpc);
    if (!node) {
        return node.error();
    }
    MessageBatch batch;
    batch.lastSeqno = seqno;
    std::size_t index = 0;
    for (const pugi::xml_node child : node->children("msg")) {
        const Fields fields(child, kRpc, where("msg", index++));
        auto number = fields.integer("seqno", true);
        auto priority = fields.integer("pri", true);
        auto time = fields.integer("time", false);
        if (const Error* error = detail::firstError(number, priority, time)) {
            return *error;
        }
        batch.lastSeqno = std::max(batch.lastSeqno, *number);
        if (*priority < kMsgUserAlert) {
            continue;
        }
        api::BoincNotice notice;
        notice.seqno = *number;
        notice.time = *time;
        notice.project = std::string(detail::textOf(child.child("project")));
        notice.text = std::string(detail::textOf(child.child("body")));
        notice.error = true;
        (*priority >= kMsgInternalError ? batch.errors : batch.alerts).push_back(std::move(notice));
    }
    for (auto* list : {&batch.errors, &batch.alerts}) {
        std::stable_sort(
            list->begin(), list->end(),
            [](const api::BoincNotice& a, const api::BoincNotice& b) { return a.seqno < b.seqno; });
    }
    return batch;
}

Result<std::string> parseGlobalPrefsOverride(std::string_view reply) {
    constexpr std::string_view kRpc = "get_global_prefs_override";
    constexpr std::string_view kOpen = "<boinc_gui_rpc_reply>";
    constexpr std::string_view kClose = "</boinc_gui_rpc_reply>";
    // Taken as text, not parsed: the client copies the file into its reply as it is, and a file the
    // volunteer broke must still come back byte for byte.
    const std::string_view whole = text::trim(reply);
    if (!whole.starts_with(kOpen) || !whole.ends_with(kClose) ||
        whole.size() < kOpen.size() + kClose.size()) {
        return detail::replyError(kRpc,
                                  "is not a GUI RPC reply: it is not enclosed in <boinc_gui_rpc_reply>");
    }
    const std::string_view content =
        text::trim(whole.substr(kOpen.size(), whole.size() - kOpen.size() - kClose.size()));
    if (content.starts_with("<unauthorized/>")) {
        return detail::replyError(kRpc,
                                  "is <unauthorized/>: the client did not accept nicer's GUI RPC password");
    }
    constexpr std::string_view kError = "<error>";
    if (content.starts_with(kError)) {
        const auto end = content.find("</error>");
        const std::string_view message = text::trim(content.substr(
            kError.size(), end == std::string_view::npos ? std::string_view::npos : end - kError.size()));
        if (message == "no prefs override file") {
            return std::string();
        }
        return detail::replyError(kRpc, "is an error: " + std::string(message));
    }
    return std::string(content);
}

Result<OperationPoll> parseOperationPoll(std::string_view reply, std::string_view rpc) {
    const char* element = rpc == "acct_mgr_rpc_poll" ? "acct_mgr_rpc_reply" : "project_attach_reply";
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, rpc);
    if (!root) {
        return root.error();
    }
    auto node = detail::answer(*root, element, rpc);
    if (!node) {
        return node.error();
    }
    const Fields fields(*node, rpc, "<" + std::string(element) + ">");
    auto errorNum = fields.integer("error_num", true);
    if (!errorNum) {
        return errorNum.error();
    }
    OperationPoll poll;
    poll.errorNum = static_cast<int>(*errorNum);
    for (const pugi::xml_node message : node->children("message")) {
        if (const std::string_view text = detail::textOf(message); !text.empty()) {
            poll.messages.emplace_back(text);
        }
    }
    return poll;
}

} // namespace nicer::boinc
