#include "boinc/BoincRpc.h"

#include "boinc/GuiRpcProtocol.h"

#include <memory>
#include <optional>
#include <utility>

namespace nicer::boinc {

namespace {

std::string projectOp(const char* op, const std::string& url) {
    return std::string("<") + op + ">\n  <project_url>" + xmlEscape(url) + "</project_url>\n</" + op + ">\n";
}

} // namespace

template <typename T, typename Parse>
void BoincRpc::request(const std::string& body, Parse parse, Done<T> done) {
    m_client.call(body, [parse = std::move(parse), done = std::move(done)](Result<std::string> reply) {
        if (!reply) {
            done(reply.error());
            return;
        }
        done(parse(*reply));
    });
}

void BoincRpc::getCcStatus(Done<CcStatus> done) {
    request<CcStatus>("<get_cc_status/>\n", &parseCcStatus, std::move(done));
}

void BoincRpc::getProjectStatus(Done<std::vector<api::BoincProject>> done) {
    request<std::vector<api::BoincProject>>("<get_project_status/>\n", &parseProjectStatus, std::move(done));
}

void BoincRpc::getResults(Done<std::vector<api::BoincTask>> done) {
    request<std::vector<api::BoincTask>>("<get_results>\n  <active_only>0</active_only>\n</get_results>\n",
                                         &parseResults, std::move(done));
}

void BoincRpc::getFileTransfers(Done<std::vector<api::BoincTransfer>> done) {
    request<std::vector<api::BoincTransfer>>("<get_file_transfers/>\n", &parseFileTransfers, std::move(done));
}

void BoincRpc::getTaskLimits(Done<TaskLimitMap> done) {
    request<TaskLimitMap>("<get_state/>\n", &parseTaskLimits, std::move(done));
}

void BoincRpc::getNotices(std::int64_t seqno, Done<NoticeBatch> done) {
    request<NoticeBatch>("<get_notices>\n  <seqno>" + std::to_string(seqno) + "</seqno>\n</get_notices>\n",
                         &parseNotices, std::move(done));
}

void BoincRpc::getMessages(std::int64_t seqno, Done<MessageBatch> done) {
    request<MessageBatch>(
        "<get_messages>\n  <seqno>" + std::to_string(seqno) + "</seqno>\n</get_messages>\n",
        [seqno](std::string_view reply) { return parseMessages(reply, seqno); }, std::move(done));
}

void BoincRpc::getGlobalPrefsOverride(Done<std::string> done) {
    request<std::string>("<get_global_prefs_override/>\n", &parseGlobalPrefsOverride, std::move(done));
}

void BoincRpc::setGlobalPrefsOverride(const std::string& xml, Done<void> done) {
    // Both requests go at once: the connection keeps them in order. The answer is the first failure, so a
    // refused write is not hidden by the re-read that follows it.
    auto written = std::make_shared<std::optional<Error>>();
    m_client.call("<set_global_prefs_override>\n" + xml + "\n</set_global_prefs_override>\n",
                  [written](Result<std::string> reply) {
                      auto ok = reply ? parseSuccess(*reply, "set_global_prefs_override")
                                      : Result<void>(reply.error());
                      if (!ok) {
                          *written = ok.error();
                      }
                  });
    request<void>(
        "<read_global_prefs_override/>\n",
        [written](std::string_view reply) -> Result<void> {
            if (*written) {
                return **written;
            }
            return parseSuccess(reply, "read_global_prefs_override");
        },
        [written, done = std::move(done)](Result<void> result) {
            done(*written ? Result<void>(**written) : std::move(result));
        });
}

void BoincRpc::projectAttach(const std::string& url, const std::string& authenticator,
                             const std::string& name, Done<void> done) {
    request<void>(
        "<project_attach>\n  <project_url>" + xmlEscape(url) + "</project_url>\n  <authenticator>" +
            xmlEscape(authenticator) + "</authenticator>\n  <project_name>" + xmlEscape(name) +
            "</project_name>\n</project_attach>\n",
        [](std::string_view reply) { return parseSuccess(reply, "project_attach"); }, std::move(done));
}

void BoincRpc::projectAttachPoll(Done<OperationPoll> done) {
    request<OperationPoll>(
        "<project_attach_poll/>\n",
        [](std::string_view reply) { return parseOperationPoll(reply, "project_attach_poll"); },
        std::move(done));
}

void BoincRpc::acctMgrRpc(const std::string& url, const std::string& name, const std::string& password,
                          Done<void> done) {
    request<void>(
        "<acct_mgr_rpc>\n  <url>" + xmlEscape(url) + "</url>\n  <name>" + xmlEscape(name) +
            "</name>\n  <password>" + xmlEscape(password) + "</password>\n</acct_mgr_rpc>\n",
        [](std::string_view reply) { return parseSuccess(reply, "acct_mgr_rpc"); }, std::move(done));
}

void BoincRpc::acctMgrRpcPoll(Done<OperationPoll> done) {
    request<OperationPoll>(
        "<acct_mgr_rpc_poll/>\n",
        [](std::string_view reply) { return parseOperationPoll(reply, "acct_mgr_rpc_poll"); },
        std::move(done));
}

void BoincRpc::projectDetach(const std::string& url, Done<void> done) {
    request<void>(
        projectOp("project_detach", url),
        [](std::string_view reply) { return parseSuccess(reply, "project_detach"); }, std::move(done));
}

void BoincRpc::projectUpdate(const std::string& url, Done<void> done) {
    request<void>(
        projectOp("project_update", url),
        [](std::string_view reply) { return parseSuccess(reply, "project_update"); }, std::move(done));
}

void BoincRpc::quit(Done<void> done) {
    request<void>(
        "<quit/>\n", [](std::string_view reply) { return parseSuccess(reply, "quit"); }, std::move(done));
}

} // namespace nicer::boinc
