#pragma once

#include "api/Boinc.h"
#include "boinc/GuiRpcClient.h"
#include "boinc/GuiRpcReplies.h"
#include "util/Result.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nicer::boinc {

/**
 * The GUI RPC calls nicer makes, typed: each sends its request through a GuiRpcClient and hands its
 * callback the parsed reply, or the error of the connection or of the reply. The requests and their tags
 * are those BOINC 7.20's client accepts (client/gui_rpc_server_ops.cpp); values are escaped.
 *
 * BoincRpc keeps no state of its own and its callbacks do not refer to it, so it may be destroyed while
 * calls are pending; the client must outlive it.
 */
class BoincRpc {
public:
    template <typename T>
    using Done = std::function<void(Result<T>)>;

    explicit BoincRpc(GuiRpcClient& client)
        : m_client(client) {}

    void getCcStatus(Done<CcStatus> done);
    void getProjectStatus(Done<std::vector<api::BoincProject>> done);
    /// All tasks, not only the active ones.
    void getResults(Done<std::vector<api::BoincTask>> done);
    void getFileTransfers(Done<std::vector<api::BoincTransfer>> done);
    /// The limits of BOINC's tasks, from its whole state (a large reply: ask when the tasks change).
    void getTaskLimits(Done<TaskLimitMap> done);
    /// The notices after @p seqno (0: all of them).
    void getNotices(std::int64_t seqno, Done<NoticeBatch> done);
    /// The alert and error lines of the event log after @p seqno (0: the whole log the client keeps).
    void getMessages(std::int64_t seqno, Done<MessageBatch> done);
    /// The override file's text, "" when there is none.
    void getGlobalPrefsOverride(Done<std::string> done);
    /// Writes @p xml as the override file ("" removes it) and has the client read it again, so that it
    /// takes effect at once (set_global_prefs_override, then read_global_prefs_override).
    void setGlobalPrefsOverride(const std::string& xml, Done<void> done);
    /// Starts attaching to the project at @p url with the account key @p authenticator; @p name is shown
    /// until the client has fetched the project's own. Follow with projectAttachPoll().
    void projectAttach(const std::string& url, const std::string& authenticator, const std::string& name,
                       Done<void> done);
    void projectAttachPoll(Done<OperationPoll> done);
    /// Starts joining the account manager at @p url as @p name with @p password (the client hashes it).
    /// Follow with acctMgrRpcPoll().
    void acctMgrRpc(const std::string& url, const std::string& name, const std::string& password,
                    Done<void> done);
    void acctMgrRpcPoll(Done<OperationPoll> done);
    /// Detaches from the project (its tasks and files go). Projects of an account manager refuse.
    void projectDetach(const std::string& url, Done<void> done);
    /// Asks the client to contact the project's scheduler now.
    void projectUpdate(const std::string& url, Done<void> done);
    /// Asks the client to exit; it answers first.
    void quit(Done<void> done);

private:
    /// Sends @p body and hands @p done what @p parse makes of the reply.
    template <typename T, typename Parse>
    void request(const std::string& body, Parse parse, Done<T> done);

    GuiRpcClient& m_client;
};

} // namespace nicer::boinc
