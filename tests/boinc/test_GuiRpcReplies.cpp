// The parsers of the replies that carry data, on replies recorded from the real client
// (tests/boinc/replies/) and on replies written here in the client's own format (client/*.cpp's
// write_gui(), BOINC 7.20.5) for the states a recording does not show, and on broken ones.

#include "boinc/GuiRpcProtocol.h"
#include "boinc/GuiRpcReplies.h"
#include "boinc/Replies.h"

#include <catch2/catch.hpp>

#include <string>

using namespace nicer;
using namespace nicer::boinc;
using nicer::test::recordedReply;
using nicer::test::wrapReply;

namespace {

// One <result> as RESULT::write_gui() writes it, with an <active_task> (ACTIVE_TASK::write_gui()) when
// @p activeTask is not empty.
std::string result(int state, const std::string& flags = "", const std::string& activeTask = "") {
    return "<result>\n"
           "    <name>wu_1_0</name>\n"
           "    <wu_name>wu_1</wu_name>\n"
           "    <platform>x86_64-pc-linux-gnu</platform>\n"
           "    <version_num>100</version_num>\n"
           "    <plan_class></plan_class>\n"
           "    <project_url>http://127.0.0.1:8080/test/</project_url>\n"
           "    <final_cpu_time>0.000000</final_cpu_time>\n"
           "    <final_elapsed_time>12.500000</final_elapsed_time>\n"
           "    <exit_status>0</exit_status>\n"
           "    <state>" +
           std::to_string(state) +
           "</state>\n"
           "    <report_deadline>1796153932.000000</report_deadline>\n"
           "    <received_time>1795549132.000000</received_time>\n"
           "    <estimated_cpu_time_remaining>80.250000</estimated_cpu_time_remaining>\n" +
           flags + activeTask + "</result>\n";
}

std::string activeTask(int taskState, int schedulerState) {
    return "<active_task>\n"
           "    <active_task_state>" +
           std::to_string(taskState) +
           "</active_task_state>\n"
           "    <app_version_num>100</app_version_num>\n"
           "    <slot>0</slot>\n"
           "    <pid>4242</pid>\n"
           "    <scheduler_state>" +
           std::to_string(schedulerState) +
           "</scheduler_state>\n"
           "    <checkpoint_cpu_time>0.000000</checkpoint_cpu_time>\n"
           "    <fraction_done>0.250000</fraction_done>\n"
           "    <current_cpu_time>19.000000</current_cpu_time>\n"
           "    <elapsed_time>20.000000</elapsed_time>\n"
           "</active_task>\n";
}

std::string stateOf(const std::string& oneResult) {
    const auto tasks = parseResults(wrapReply("<results>\n" + oneResult + "</results>"));
    INFO(oneResult);
    REQUIRE(tasks.ok());
    REQUIRE(tasks->size() == 1);
    return std::string(api::busKeyword(tasks->front().state));
}

} // namespace

TEST_CASE("get_cc_status of a client that runs its tasks", "[GuiRpcReplies]") {
    const auto status = parseCcStatus(recordedReply("own-get_cc_status.xml"));
    REQUIRE(status.ok());
    CHECK_FALSE(status->tasksSuspended());
    CHECK(status->taskSuspendText.empty());
    CHECK(status->taskMode == RunMode::Auto);
    CHECK_FALSE(status->networkSuspended());
    CHECK(status->networkMode == RunMode::Auto);
}

TEST_CASE("get_cc_status while non-BOINC CPU use suspends the tasks (the default preferences)",
          "[GuiRpcReplies]") {
    const auto status = parseCcStatus(recordedReply("own-get_cc_status-cpu-busy.xml"));
    REQUIRE(status.ok());
    CHECK(status->taskSuspendReason == 1024);
    CHECK(status->taskSuspendText == "the computer is busy (non-BOINC CPU use above the limit)");
    CHECK(status->taskMode == RunMode::Auto);
    CHECK_FALSE(status->networkSuspended());
}

TEST_CASE("get_cc_status with tasks and network suspended in the Activity menu", "[GuiRpcReplies]") {
    const auto status = parseCcStatus(recordedReply("own-get_cc_status-suspended-by-user.xml"));
    REQUIRE(status.ok());
    CHECK(status->taskSuspendReason == 4);
    CHECK(status->taskSuspendText == "suspended by the volunteer (BOINC's activity is set to suspend)");
    CHECK(status->taskMode == RunMode::Never);
    CHECK(status->networkSuspendReason == 4);
    CHECK(status->networkMode == RunMode::Never);
    CHECK(runModeName(status->taskMode) == "never");
}

TEST_CASE("suspend reasons in plain words: known codes, bits together, unknown codes", "[GuiRpcReplies]") {
    CHECK(suspendReasonText(0).empty());
    CHECK(suspendReasonText(1024) == "the computer is busy (non-BOINC CPU use above the limit)");
    CHECK(suspendReasonText(2) == "the computer is in use");
    CHECK(suspendReasonText(4097) == "the computer is not on WiFi"); // a value, not bits 1 and 4096
    CHECK(suspendReasonText(1 | 1024) ==
          "the computer is on batteries; the computer is busy (non-BOINC CPU use above the limit)");
    CHECK(suspendReasonText(8192) == "an unknown reason (BOINC code 8192)");
}

TEST_CASE("get_cc_status that lacks a field or has a wrong one", "[GuiRpcReplies]") {
    const auto missing = parseCcStatus(wrapReply("<cc_status>\n<task_mode>2</task_mode>\n"
                                                 "<network_suspend_reason>0</network_suspend_reason>\n"
                                                 "<network_mode>2</network_mode>\n</cc_status>"));
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message ==
          "BOINC's reply to get_cc_status has <cc_status> with no <task_suspend_reason>");

    const auto text = parseCcStatus(wrapReply("<cc_status>\n<task_suspend_reason>busy</task_suspend_reason>\n"
                                              "<task_mode>2</task_mode>\n<network_suspend_reason>0"
                                              "</network_suspend_reason>\n<network_mode>2</network_mode>\n"
                                              "</cc_status>"));
    REQUIRE_FALSE(text.ok());
    CHECK(text.error().message == "BOINC's reply to get_cc_status has <cc_status> with "
                                  "<task_suspend_reason>busy</task_suspend_reason>, which is not a number");

    const auto mode = parseCcStatus(wrapReply("<cc_status>\n<task_suspend_reason>0</task_suspend_reason>\n"
                                              "<task_mode>7</task_mode>\n<network_suspend_reason>0"
                                              "</network_suspend_reason>\n<network_mode>2</network_mode>\n"
                                              "</cc_status>"));
    REQUIRE_FALSE(mode.ok());
    CHECK(mode.error().message ==
          "BOINC's reply to get_cc_status has <task_mode>7</task_mode>, which is no run mode (1 always, 2 "
          "auto, 3 never)");

    const auto other = parseCcStatus(recordedReply("own-get_project_status.xml"));
    REQUIRE_FALSE(other.ok());
    CHECK(other.error().message == "BOINC's reply to get_cc_status has no <cc_status> element");

    const auto full = recordedReply("own-get_cc_status.xml");
    const auto truncated = parseCcStatus(full.substr(0, full.size() - 40));
    REQUIRE_FALSE(truncated.ok());
    CHECK_THAT(truncated.error().message,
               Catch::StartsWith("BOINC's reply to get_cc_status is not well-formed XML"));
}

TEST_CASE("get_project_status of a project being attached (its name written unescaped by the client)",
          "[GuiRpcReplies]") {
    const auto projects = parseProjectStatus(recordedReply("own-get_project_status.xml"));
    REQUIRE(projects.ok());
    REQUIRE(projects->size() == 1);
    const api::BoincProject& project = projects->front();
    CHECK(project.url == "http://127.0.0.1:9/nothere/");
    // The client writes <project_name> as it is: a raw "&" that pugixml keeps.
    CHECK(project.name == "Nowhere & Co");
    CHECK(project.userCredit == 0.0);
    CHECK_FALSE(project.suspended);
    CHECK_FALSE(project.noMoreWork);
    CHECK_FALSE(project.viaAccountManager);
}

TEST_CASE("get_project_status: credits and flags", "[GuiRpcReplies]") {
    const auto projects = parseProjectStatus(wrapReply(
        "<projects>\n<project>\n<master_url>https://einstein.phys.uwm.edu/</master_url>\n"
        "<project_name>Einstein@Home</project_name>\n<user_total_credit>1234.500000</user_total_credit>\n"
        "<host_total_credit>100.250000</host_total_credit>\n<host_expavg_credit>3.500000</"
        "host_expavg_credit>\n"
        "<suspended_via_gui/>\n<dont_request_more_work/>\n<attached_via_acct_mgr/>\n</project>\n"
        "<project>\n<master_url>http://b/</master_url>\n</project>\n</projects>"));
    REQUIRE(projects.ok());
    REQUIRE(projects->size() == 2);
    CHECK(projects->at(0) == api::BoincProject{"https://einstein.phys.uwm.edu/", "Einstein@Home", 1234.5,
                                               100.25, 3.5, true, true, true});
    CHECK(projects->at(1).url == "http://b/");
    CHECK(projects->at(1).name.empty());

    const auto none = parseProjectStatus(wrapReply("<projects>\n</projects>"));
    REQUIRE(none.ok());
    CHECK(none->empty());

    const auto noUrl =
        parseProjectStatus(wrapReply("<projects>\n<project>\n<master_url>http://a/</master_url>\n"
                                     "</project>\n<project>\n<project_name>B</project_name>\n"
                                     "</project>\n</projects>"));
    REQUIRE_FALSE(noUrl.ok());
    CHECK(noUrl.error().message ==
          "BOINC's reply to get_project_status has <project> number 2 with no <master_url>");
}

TEST_CASE("get_results: each result state and active task state maps to one keyword", "[GuiRpcReplies]") {
    CHECK(stateOf(result(0)) == "downloading");
    CHECK(stateOf(result(1)) == "downloading");
    CHECK(stateOf(result(2)) == "ready"); // downloaded, never started
    CHECK(stateOf(result(2, "", activeTask(1, 2))) == "running");
    // Stopped while the CPU scheduler wants it running: a client-wide suspension (CPU busy, user active).
    CHECK(stateOf(result(2, "", activeTask(9, 2))) == "suspended");
    // Preempted by the scheduler, left in memory: waiting for its turn.
    CHECK(stateOf(result(2, "", activeTask(9, 1))) == "ready");
    CHECK(stateOf(result(2, "", activeTask(0, 1))) == "ready");
    CHECK(stateOf(result(2, "    <suspended_via_gui/>\n", activeTask(9, 1))) == "suspended");
    CHECK(stateOf(result(2, "    <project_suspended_via_gui/>\n")) == "suspended");
    CHECK(stateOf(result(3)) == "error");
    CHECK(stateOf(result(4)) == "uploading");
    CHECK(stateOf(result(5, "    <ready_to_report/>\n")) == "ready-to-report");
    CHECK(stateOf(result(5, "    <got_server_ack/>\n    <ready_to_report/>\n")) == "reported");
    CHECK(stateOf(result(6)) == "aborted");
    CHECK(stateOf(result(7)) == "error");
}

TEST_CASE("get_results: the numbers of a running task and of a finished one", "[GuiRpcReplies]") {
    const auto tasks = parseResults(wrapReply("<results>\n" + result(2, "", activeTask(1, 2)) +
                                              result(5, "    <ready_to_report/>\n") + "</results>"));
    REQUIRE(tasks.ok());
    REQUIRE(tasks->size() == 2);
    const api::BoincTask& running = tasks->at(0);
    CHECK(running.name == "wu_1_0");
    CHECK(running.projectUrl == "http://127.0.0.1:8080/test/");
    CHECK(running.fractionDone == 0.25);
    CHECK(running.elapsedSeconds == 20.0);
    CHECK(running.remainingSeconds == 80.25);
    CHECK(running.deadline == 1796153932);
    CHECK(running.cpuSeconds == 19.0);         // current_cpu_time
    CHECK(running.elapsedLimitSeconds == 0.0); // get_state's
    const api::BoincTask& done = tasks->at(1);
    CHECK(done.fractionDone == 1.0);
    CHECK(done.elapsedSeconds == 12.5); // final_elapsed_time
    CHECK(done.cpuSeconds == 0.0);      // final_cpu_time
    CHECK(done.remainingSeconds == 0.0);
}

TEST_CASE("get_results that is empty, lacks a field or has an unknown state", "[GuiRpcReplies]") {
    const auto none = parseResults(wrapReply("<results>\n</results>"));
    REQUIRE(none.ok());
    CHECK(none->empty());

    const auto unknown = parseResults(wrapReply("<results>\n" + result(2) + result(12) + "</results>"));
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().message == "BOINC's reply to get_results has <result> number 2 with "
                                     "<state>12</state>, which BOINC 7.20 does not "
                                     "define");

    const auto noState = parseResults(wrapReply("<results>\n<result>\n<name>x</name>\n<project_url>http://a/"
                                                "</project_url>\n</result>\n</results>"));
    REQUIRE_FALSE(noState.ok());
    CHECK(noState.error().message == "BOINC's reply to get_results has <result> number 1 with no <state>");

    const auto badActive = parseResults(wrapReply(
        "<results>\n" + result(2, "", "<active_task>\n<fraction_done>x</fraction_done>\n</active_task>\n") +
        "</results>"));
    REQUIRE_FALSE(badActive.ok());
    CHECK(badActive.error().message == "BOINC's reply to get_results has the <active_task> of <result> "
                                       "number 1 with no <active_task_state>");

    const auto wrong = parseResults(recordedReply("own-get_cc_status.xml"));
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.error().message == "BOINC's reply to get_results has no <results> element");
}

TEST_CASE("get_file_transfers: an active download and one waiting for a retry", "[GuiRpcReplies]") {
    // FILE_INFO::write_gui() and PERS_FILE_XFER::write(): <file_xfer> only while bytes move.
    const auto transfers = parseFileTransfers(wrapReply(
        "<file_transfers>\n"
        "<file_transfer>\n    <project_url>http://127.0.0.1:8080/test/</project_url>\n"
        "    <project_name>nicer test</project_name>\n    <name>input_1</name>\n"
        "    <nbytes>1048576.000000</nbytes>\n    <max_nbytes>0.000000</max_nbytes>\n    <status>0</status>\n"
        "    <persistent_file_xfer>\n        <num_retries>0</num_retries>\n"
        "        <first_request_time>1795549132.0</first_request_time>\n"
        "        <next_request_time>1795549132.0</next_request_time>\n        "
        "<time_so_far>2.0</time_so_far>\n"
        "        <last_bytes_xferred>262144.000000</last_bytes_xferred>\n        <is_upload>0</is_upload>\n"
        "    </persistent_file_xfer>\n"
        "    <file_xfer>\n        <bytes_xferred>262144.000000</bytes_xferred>\n"
        "        <file_offset>0.000000</file_offset>\n        <xfer_speed>131072.000000</xfer_speed>\n"
        "        <url>http://127.0.0.1:8080/test/download/input_1</url>\n    </file_xfer>\n"
        "</file_transfer>\n"
        "<file_transfer>\n    <project_url>http://127.0.0.1:8080/test/</project_url>\n"
        "    <project_name>nicer test</project_name>\n    <name>wu_1_0_r1_0</name>\n"
        "    <nbytes>2048.000000</nbytes>\n    <max_nbytes>100000.000000</max_nbytes>\n    "
        "<status>1</status>\n"
        "    <persistent_file_xfer>\n        <num_retries>2</num_retries>\n"
        "        <last_bytes_xferred>0.000000</last_bytes_xferred>\n        <is_upload>1</is_upload>\n"
        "    </persistent_file_xfer>\n    <project_backoff>60.000000</project_backoff>\n"
        "</file_transfer>\n"
        "</file_transfers>"));
    REQUIRE(transfers.ok());
    REQUIRE(transfers->size() == 2);
    CHECK(transfers->at(0) == api::BoincTransfer{"input_1", "http://127.0.0.1:8080/test/", false, 1048576.0,
                                                 262144.0, 131072.0, api::BoincTransferState::Active});
    CHECK(transfers->at(1) == api::BoincTransfer{"wu_1_0_r1_0", "http://127.0.0.1:8080/test/", true, 2048.0,
                                                 0.0, 0.0, api::BoincTransferState::Waiting});
}

TEST_CASE("get_file_transfers that is empty or broken", "[GuiRpcReplies]") {
    const auto none = parseFileTransfers(wrapReply("<file_transfers>\n</file_transfers>"));
    REQUIRE(none.ok());
    CHECK(none->empty());

    const auto noPersistent = parseFileTransfers(
        wrapReply("<file_transfers>\n<file_transfer>\n<project_url>http://a/</project_url>\n"
                  "<name>f</name>\n</file_transfer>\n</file_transfers>"));
    REQUIRE_FALSE(noPersistent.ok());
    CHECK(noPersistent.error().message ==
          "BOINC's reply to get_file_transfers has <file_transfer> number 1 with no <persistent_file_xfer>");
}

TEST_CASE("get_notices: the client's own alert, its translation markers removed", "[GuiRpcReplies]") {
    const auto batch = parseNotices(recordedReply("own-get_notices-client-alert.xml"));
    REQUIRE(batch.ok());
    CHECK_FALSE(batch->refresh);
    REQUIRE(batch->notices.size() == 1);
    const api::BoincNotice& notice = batch->notices.front();
    CHECK(notice.seqno == 1);
    CHECK(notice.time == 1795549139);
    CHECK(notice.project.empty());
    CHECK(notice.title.empty());
    CHECK(notice.text == "BOINC can't access Internet - check network connection or proxy configuration.");
    CHECK(notice.error);

    const auto empty = parseNotices(recordedReply("own-get_notices-empty.xml"));
    REQUIRE(empty.ok());
    CHECK(empty->notices.empty());
}

TEST_CASE("get_notices: a project's news in HTML becomes plain text, a refresh replaces everything",
          "[GuiRpcReplies]") {
    const auto batch = parseNotices(wrapReply(
        "<notices>\n"
        "<notice>\n   <title></title>\n   <description><![CDATA[\n]]></description>\n"
        "   <create_time>0.000000</create_time>\n   <arrival_time>0.000000</arrival_time>\n"
        "   <is_private>0</is_private>\n   <project_name></project_name>\n   <category></category>\n"
        "   <link><![CDATA[]]></link>\n   <seqno>-1</seqno>\n</notice>\n"
        "<notice>\n   <title>Server &amp; database upgrade</title>\n"
        "   <description><![CDATA[\n<p>We will be <b>down</b> on Tuesday&nbsp;&amp; Wednesday.</p>"
        "<p>See <a href=\"https://example.org/\">the forum</a>.<br/>Thanks!</p>\n]]></description>\n"
        "   <create_time>1795549000.500000</create_time>\n   <arrival_time>1795549100.000000</arrival_time>\n"
        "   <is_private>0</is_private>\n   <project_name>Einstein@Home</project_name>\n"
        "   <category>news</category>\n   <link><![CDATA[https://example.org/n/1]]></link>\n"
        "   <seqno>3</seqno>\n</notice>\n"
        "<notice>\n   <title></title>\n   <description><![CDATA[\nYour app_info.xml has no usable version of "
        "nicertest.\n]]></description>\n   <create_time>1795549200.000000</create_time>\n"
        "   <arrival_time>1795549200.000000</arrival_time>\n   <is_private>0</is_private>\n"
        "   <project_name>nicer test</project_name>\n   <category>scheduler</category>\n"
        "   <link><![CDATA[]]></link>\n   <seqno>2</seqno>\n</notice>\n"
        "</notices>"));
    REQUIRE(batch.ok());
    CHECK(batch->refresh);
    REQUIRE(batch->notices.size() == 2);
    CHECK(batch->notices[0].seqno == 2); // oldest first
    CHECK(batch->notices[0].error);      // a scheduler's message to this computer
    CHECK(batch->notices[0].project == "nicer test");
    const api::BoincNotice& news = batch->notices[1];
    CHECK(news.title == "Server & database upgrade");
    CHECK(news.text == "We will be down on Tuesday & Wednesday.\nSee the forum.\nThanks!");
    CHECK(news.time == 1795549000);
    CHECK(news.project == "Einstein@Home");
    CHECK_FALSE(news.error);
}

TEST_CASE("get_notices: a time too large for seconds since the epoch is refused, not cast",
          "[GuiRpcReplies]") {
    // Found by tests/fuzz/fuzz_GuiRpcReplies (UBSan): 1e300 was cast to a 64-bit integer.
    const auto notice = [](const std::string& created) {
        return parseNotices(wrapReply("<notices>\n<notice>\n   <title>t</title>\n   <create_time>" + created +
                                      "</create_time>\n   <arrival_time>5.000000</arrival_time>\n"
                                      "   <seqno>1</seqno>\n</notice>\n</notices>"));
    };
    const auto huge = notice("1e300");
    REQUIRE_FALSE(huge.ok());
    CHECK_THAT(huge.error().message, Catch::Contains("out-of-range <create_time>"));
    CHECK_FALSE(notice("-1e19").ok());
    REQUIRE(notice("1795549000.900000").ok());
    CHECK(notice("1795549000.900000")->notices.at(0).time == 1795549000);
    CHECK(notice("0.000000")->notices.at(0).time == 5);
}

TEST_CASE("get_messages: only the alerts and errors, and the last seqno of all", "[GuiRpcReplies]") {
    const auto all = parseMessages(recordedReply("own-get_messages.xml"), 0);
    REQUIRE(all.ok());
    CHECK(all->errors.empty()); // the start-up log: information only
    CHECK(all->alerts.empty());
    CHECK(all->lastSeqno > 40);

    const auto alert = parseMessages(recordedReply("own-get_messages-user-alert.xml"), 50);
    REQUIRE(alert.ok());
    CHECK(alert->lastSeqno == 52);
    CHECK(alert->errors.empty());
    REQUIRE(alert->alerts.size() == 1); // also a notice: own-get_notices-client-alert.xml
    CHECK(alert->alerts.front() ==
          api::BoincNotice{52, 1795549139, "", "",
                           "BOINC can't access Internet - check network connection or "
                           "proxy configuration.",
                           true});

    const auto nothing = parseMessages(wrapReply("<msgs>\n</msgs>"), 52);
    REQUIRE(nothing.ok());
    CHECK(nothing->lastSeqno == 52);

    const auto internal = parseMessages(
        wrapReply(
            "<msgs>\n<msg>\n <project>nicer test</project>\n <pri>3</pri>\n <seqno>60</seqno>\n"
            " <body><![CDATA[\n[error] Can't parse a file\n]]></body>\n <time>1795549300</time>\n</msg>\n"
            "</msgs>"),
        52);
    REQUIRE(internal.ok());
    CHECK(internal->alerts.empty());
    REQUIRE(internal->errors.size() == 1);
    CHECK(internal->errors.front().project == "nicer test");
    CHECK(internal->errors.front().text == "[error] Can't parse a file");

    const auto noPriority =
        parseMessages(wrapReply("<msgs>\n<msg>\n <seqno>1</seqno>\n <body>x</body>\n</msg>\n</msgs>"), 0);
    REQUIRE_FALSE(noPriority.ok());
    CHECK(noPriority.error().message == "BOINC's reply to get_messages has <msg> number 1 with no <pri>");
}

TEST_CASE("get_global_prefs_override: the file's text, or none", "[GuiRpcReplies]") {
    const auto none = parseGlobalPrefsOverride(recordedReply("own-get_global_prefs_override-none.xml"));
    REQUIRE(none.ok());
    CHECK(none->empty());

    const auto text = parseGlobalPrefsOverride(recordedReply("own-get_global_prefs_override.xml"));
    REQUIRE(text.ok());
    CHECK_THAT(*text, Catch::StartsWith("<global_preferences>\n   <run_on_batteries>0</run_on_batteries>"));
    CHECK_THAT(*text, Catch::EndsWith("</global_preferences>"));

    // A file that is not XML comes back as it is (here: literal backslash-n written into it by hand).
    const auto junk = parseGlobalPrefsOverride(recordedReply("own-get_global_prefs_override-stray-text.xml"));
    REQUIRE(junk.ok());
    CHECK_THAT(*junk, Catch::StartsWith("\\n<global_preferences>\\n"));

    const auto refused = parseGlobalPrefsOverride(recordedReply("own-auth2-unauthorized.xml"));
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("<unauthorized/>"));

    const auto error = parseGlobalPrefsOverride(wrapReply("<error>disk on fire</error>"));
    REQUIRE_FALSE(error.ok());
    CHECK(error.error().message == "BOINC's reply to get_global_prefs_override is an error: disk on fire");

    const auto cut = parseGlobalPrefsOverride("<boinc_gui_rpc_reply>\n<global_preferences>\n");
    REQUIRE_FALSE(cut.ok());
    CHECK_THAT(cut.error().message, Catch::Contains("is not a GUI RPC reply"));
}

TEST_CASE("project_attach_poll and acct_mgr_rpc_poll", "[GuiRpcReplies]") {
    const auto attached =
        parseOperationPoll(recordedReply("own-project_attach_poll-done.xml"), "project_attach_poll");
    REQUIRE(attached.ok());
    CHECK(attached->succeeded());
    CHECK(attached->messages.empty());

    const auto waiting =
        parseOperationPoll(recordedReply("own-acct_mgr_rpc_poll-in-progress.xml"), "acct_mgr_rpc_poll");
    REQUIRE(waiting.ok());
    CHECK(waiting->inProgress());
    CHECK(waiting->describe() == "BOINC error -204: still in progress");

    const auto failed =
        parseOperationPoll(wrapReply("<acct_mgr_rpc_reply>\n    <message>Invalid password</message>\n"
                                     "    <error_num>-206</error_num>\n</acct_mgr_rpc_reply>"),
                           "acct_mgr_rpc_poll");
    REQUIRE(failed.ok());
    CHECK_FALSE(failed->succeeded());
    CHECK(failed->describe() == "Invalid password (BOINC error -206: wrong password)");

    const auto crossed =
        parseOperationPoll(recordedReply("own-project_attach_poll-done.xml"), "acct_mgr_rpc_poll");
    REQUIRE_FALSE(crossed.ok());
    CHECK(crossed.error().message ==
          "BOINC's reply to acct_mgr_rpc_poll has no <acct_mgr_rpc_reply> element");
}

// The recordings of a whole session with the local test project (tests/boinc/replies/README.md,
// record.py): attach, download, run, upload, report. Ports, times and nonces change with each recording, so
// only what the session fixes is checked exactly.

namespace {

bool isTestProjectUrl(const std::string& url) {
    return url.starts_with("http://127.0.0.1:") && url.ends_with("/nicertest/");
}

} // namespace

TEST_CASE("recorded: the test project's task while it runs", "[GuiRpcReplies]") {
    const auto tasks = parseResults(recordedReply("get_results-running.xml"));
    REQUIRE(tasks.ok());
    REQUIRE(tasks->size() == 1);
    const api::BoincTask& task = tasks->front();
    CHECK(task.name == "nicertest_wu_1_0");
    CHECK(isTestProjectUrl(task.projectUrl));
    CHECK(task.state == api::BoincTaskState::Running);
    CHECK(task.fractionDone > 0.0);
    CHECK(task.fractionDone < 1.0);
    CHECK(task.elapsedSeconds > 0.0);
    CHECK(task.remainingSeconds > 0.0);
    CHECK(task.deadline > 1700000000);

    CHECK(parseResults(recordedReply("get_results-active_only.xml")).value().size() == 1);
    CHECK(parseResults(recordedReply("get_results-empty.xml")).value().empty());
}

namespace {

/// A get_state reply: one project with @p versions (app_version elements) and two work units and results.
std::string state(const std::string& versions, const std::string& bound = "86400000000000.0") {
    return wrapReply(
        "<client_state>\n"
        "<project><master_url>http://127.0.0.1:8080/test/</master_url></project>\n"
        "<app><name>app</name></app>\n" +
        versions +
        "<workunit><name>wu_1</name><app_name>app</app_name><version_num>100</version_num>"
        "<rsc_fpops_est>1e10</rsc_fpops_est><rsc_fpops_bound>" +
        bound +
        "</rsc_fpops_bound></workunit>\n"
        "<workunit><name>wu_2</name><app_name>app</app_name><version_num>100</version_num>"
        "<rsc_fpops_bound>1e9</rsc_fpops_bound></workunit>\n"
        "<result><name>wu_1_0</name><wu_name>wu_1</wu_name><version_num>100</version_num>"
        "<plan_class>mt</plan_class><project_url>http://127.0.0.1:8080/test/</project_url></result>\n"
        "<result><name>wu_2_0</name><wu_name>wu_2</wu_name><version_num>100</version_num>"
        "<plan_class></plan_class><project_url>http://127.0.0.1:8080/test/</project_url></result>\n"
        "<result><name>wu_3_0</name><wu_name>wu_3</wu_name><version_num>100</version_num>"
        "<project_url>http://127.0.0.1:8080/test/</project_url></result>\n"
        "</client_state>");
}

const std::string kUrl = "http://127.0.0.1:8080/test/";

} // namespace

TEST_CASE("get_state: each task's elapsed-time limit is its bound over its app version's speed",
          "[GuiRpcReplies]") {
    const std::string versions =
        "<app_version><app_name>app</app_name><version_num>100</version_num><avg_ncpus>4.0</avg_ncpus>"
        "<flops>2e9</flops><plan_class>mt</plan_class></app_version>\n"
        "<app_version><app_name>app</app_name><version_num>100</version_num><avg_ncpus>0.2</avg_ncpus>"
        "<flops>1e10</flops><coproc><type>NVIDIA</type><count>1</count></coproc></app_version>\n";
    const auto limits = parseTaskLimits(state(versions));
    REQUIRE(limits.ok());
    REQUIRE(limits->size() == 2); // wu_3's work unit is not in the reply
    // The multithreaded version (plan class mt): 8.64e13 / 2e9.
    const auto& mt = limits->at({kUrl, "wu_1_0"});
    CHECK(mt.elapsedLimitSeconds == Approx(43200.0));
    CHECK(mt.cpus == 4.0);
    CHECK_FALSE(mt.gpu);
    // The GPU version: 1e9 / 1e10 = 0.1 s, under BOINC's 120 s minimum, so BOINC takes 12 hours.
    const auto& gpu = limits->at({kUrl, "wu_2_0"});
    CHECK(gpu.elapsedLimitSeconds == 43200.0);
    CHECK(gpu.cpus == 0.2);
    CHECK(gpu.gpu);
}

TEST_CASE("get_state: a tight bound, and replies that lack a field", "[GuiRpcReplies]") {
    const std::string version =
        "<app_version><app_name>app</app_name><version_num>100</version_num><flops>1e9</flops>"
        "<plan_class>mt</plan_class></app_version>\n";
    const auto tight = parseTaskLimits(state(version, "1.22e11"));
    REQUIRE(tight.ok());
    CHECK(tight->at({kUrl, "wu_1_0"}).elapsedLimitSeconds == Approx(122.0));
    CHECK(tight->at({kUrl, "wu_1_0"}).cpus == 1.0); // no avg_ncpus: one CPU
    CHECK(tight->count({kUrl, "wu_2_0"}) == 0);     // no version without a plan class
    const auto noFlops =
        parseTaskLimits(state("<app_version><app_name>app</app_name><version_num>100</version_num>"
                              "</app_version>\n"));
    REQUIRE_FALSE(noFlops.ok());
    CHECK_THAT(noFlops.error().message, Catch::Contains("get_state") && Catch::Contains("flops"));
    CHECK_FALSE(parseTaskLimits(wrapReply("<results/>")).ok());
}

TEST_CASE("recorded: get_state of the test project's client", "[GuiRpcReplies]") {
    const auto limits = parseTaskLimits(recordedReply("get_state.xml"));
    REQUIRE(limits.ok());
    REQUIRE(limits->size() == 1);
    const auto& [key, task] = *limits->begin();
    CHECK(key.second == "nicertest_wu_1_0");
    CHECK(isTestProjectUrl(key.first));
    CHECK(task.elapsedLimitSeconds == Approx(86400.0)); // the project's default bound: a day at 1 G flops
    CHECK(task.cpus == 1.0);
    CHECK_FALSE(task.gpu);
}

TEST_CASE("recorded: a download in progress, its bytes from the transfer itself", "[GuiRpcReplies]") {
    const std::string reply = recordedReply("get_file_transfers-active.xml");
    const auto transfers = parseFileTransfers(reply);
    REQUIRE(transfers.ok());
    REQUIRE(transfers->size() == 1);
    const api::BoincTransfer& transfer = transfers->front();
    CHECK(transfer.name == "nicertest_in_1");
    CHECK(isTestProjectUrl(transfer.projectUrl));
    CHECK_FALSE(transfer.upload);
    CHECK(transfer.state == api::BoincTransferState::Active);
    CHECK(transfer.bytesTotal == 200000000.0);
    CHECK(transfer.rate > 0.0);
    // More than <last_bytes_xferred>, which the client copies from <file_xfer> only when it polls (it said 0
    // after 20 MB when this was written).
    CHECK(transfer.bytesDone > 20e6);
    CHECK(transfer.bytesDone < transfer.bytesTotal);
    CHECK(parseFileTransfers(recordedReply("get_file_transfers-empty.xml")).value().empty());
}

TEST_CASE("recorded: the test project attached, and after its report", "[GuiRpcReplies]") {
    for (const char* name : {"get_project_status.xml", "get_project_status-after-report.xml"}) {
        INFO(name);
        const auto projects = parseProjectStatus(recordedReply(name));
        REQUIRE(projects.ok());
        REQUIRE(projects->size() == 1);
        const api::BoincProject& project = projects->front();
        CHECK(isTestProjectUrl(project.url));
        CHECK(project.name == "nicer test project");
        CHECK(project.userCredit >= 0.0);
        CHECK_FALSE(project.suspended);
        CHECK_FALSE(project.noMoreWork);
        CHECK_FALSE(project.viaAccountManager);
    }
    CHECK(parseProjectStatus(recordedReply("get_project_status-empty.xml")).value().empty());
}

TEST_CASE("recorded: a project scheduler's notice, and the same text in the event log", "[GuiRpcReplies]") {
    const std::string welcome = "Welcome to the nicer test project (a scheduler notice).";
    const auto notices = parseNotices(recordedReply("get_notices.xml"));
    REQUIRE(notices.ok());
    CHECK_FALSE(notices->refresh);
    REQUIRE(notices->notices.size() == 1);
    const api::BoincNotice& notice = notices->notices.front();
    CHECK(notice.text == welcome);
    CHECK(notice.project == "nicer test project");
    CHECK(notice.title.empty());
    CHECK(notice.error); // category "scheduler": the project telling this computer
    CHECK(notice.time > 1700000000);

    // The event log has it once per scheduler reply, where the notices keep one: alerts, not errors.
    const auto messages = parseMessages(recordedReply("get_messages.xml"), 0);
    REQUIRE(messages.ok());
    CHECK(messages->errors.empty());
    REQUIRE_FALSE(messages->alerts.empty());
    for (const api::BoincNotice& alert : messages->alerts) {
        CHECK(alert.text == "Message from server: " + welcome);
        CHECK(alert.project == "nicer test project");
        CHECK(alert.seqno <= messages->lastSeqno);
    }
    CHECK(messages->lastSeqno >= messages->alerts.back().seqno);
}

TEST_CASE("recorded: status, the override, attaching and BOINC's errors", "[GuiRpcReplies]") {
    CHECK_FALSE(parseCcStatus(recordedReply("get_cc_status.xml")).value().tasksSuspended());
    CHECK(parseCcStatus(recordedReply("get_cc_status-suspended-cpu-busy.xml")).value().taskSuspendReason ==
          1024);
    CHECK(parseGlobalPrefsOverride(recordedReply("get_global_prefs_override-none.xml")).value().empty());
    CHECK_THAT(parseGlobalPrefsOverride(recordedReply("get_global_prefs_override.xml")).value(),
               Catch::StartsWith("<global_preferences>"));
    CHECK(parseSuccess(recordedReply("set_global_prefs_override.xml"), "set_global_prefs_override").ok());
    CHECK(parseSuccess(recordedReply("read_global_prefs_override.xml"), "read_global_prefs_override").ok());
    CHECK(parseSuccess(recordedReply("project_attach.xml"), "project_attach").ok());
    CHECK(parseOperationPoll(recordedReply("project_attach_poll.xml"), "project_attach_poll")
              .value()
              .succeeded());
    CHECK_FALSE(parseNonce(recordedReply("auth1.xml")).value().empty());
    CHECK(parseAuthorized(recordedReply("auth2-authorized.xml")).ok());
    CHECK_FALSE(parseAuthorized(recordedReply("auth2-unauthorized.xml")).ok());

    CHECK(parseSuccess(recordedReply("error-project_attach-missing-url.xml"), "project_attach")
              .error()
              .message == "BOINC's reply to project_attach is an error: Missing URL");
    CHECK(parseSuccess(recordedReply("error-project_detach-unknown.xml"), "project_detach").error().message ==
          "BOINC's reply to project_detach is an error: No such project");
    CHECK(parseSuccess(recordedReply("error-unrecognized-op.xml"), "no_such_operation").error().message ==
          "BOINC's reply to no_such_operation is an error: unrecognized op: no_such_operation/");
    // get_notices without signing in.
    CHECK(parseNotices(recordedReply("error-unauthorized.xml")).error().message ==
          "BOINC's reply to get_notices is <unauthorized/>: the client did not accept nicer's GUI RPC "
          "password");
}
