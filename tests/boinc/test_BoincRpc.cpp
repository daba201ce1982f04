// BoincRpc's typed calls: the exact requests they send (the tags BOINC 7.20's client accepts, values
// escaped) and what they make of the replies, against FakeGuiRpcServer; then against the REAL client
// (/usr/bin/boinc in a directory of the test's own, on a free port): status, the preferences override set
// and read back, quit.

#include "EventLoop.h"
#include "FreePort.h"
#include "Poll.h"
#include "Skip.h"
#include "TempDir.h"
#include "boinc/BoincRpc.h"
#include "boinc/FakeGuiRpcServer.h"
#include "boinc/GlobalPrefsOverride.h"
#include "boinc/GuiRpcPassword.h"
#include "boinc/Replies.h"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <netinet/in.h>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace nicer;
using namespace nicer::boinc;
using nicer::test::FakeGuiRpcServer;
using nicer::test::recordedReply;
using nicer::test::wrapReply;
using namespace std::chrono_literals;

namespace {

constexpr const char* kPassword = "secret";

// Runs @p start(done) on a BoincRpc over a client of @p server and returns what reached done.
template <typename T, typename Start>
Result<T> run(FakeGuiRpcServer& server, Start start) {
    auto loop = test::newLoop();
    auto client = GuiRpcClient::create(loop.get(), "127.0.0.1", server.port(), kPassword);
    REQUIRE(client.ok());
    BoincRpc rpc(**client);
    std::optional<Result<T>> outcome;
    start(rpc, [&](Result<T> result) { outcome.emplace(std::move(result)); });
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return outcome.has_value(); }));
    return std::move(*outcome);
}

// The requests after the sign-in.
std::vector<std::string> calls(const FakeGuiRpcServer& server) {
    auto requests = server.requests();
    REQUIRE(requests.size() >= 2);
    return {requests.begin() + 2, requests.end()};
}

const std::string kSuccess = wrapReply("<success/>");

} // namespace

TEST_CASE("BoincRpc's reads send the requests BOINC 7.20 knows and parse the replies", "[BoincRpc]") {
    FakeGuiRpcServer server(FakeGuiRpcServer::standard(
        kPassword, {{"get_cc_status", recordedReply("own-get_cc_status-cpu-busy.xml")},
                    {"get_project_status", recordedReply("own-get_project_status.xml")},
                    {"get_results", wrapReply("<results>\n</results>")},
                    {"get_file_transfers", wrapReply("<file_transfers>\n</file_transfers>")},
                    {"get_notices", recordedReply("own-get_notices-client-alert.xml")},
                    {"get_messages", recordedReply("own-get_messages-user-alert.xml")},
                    {"get_global_prefs_override", recordedReply("own-get_global_prefs_override.xml")}}));

    const auto status = run<CcStatus>(server, [](BoincRpc& rpc, auto done) { rpc.getCcStatus(done); });
    REQUIRE(status.ok());
    CHECK(status->taskSuspendReason == 1024);
    const auto projects = run<std::vector<api::BoincProject>>(
        server, [](BoincRpc& rpc, auto done) { rpc.getProjectStatus(done); });
    REQUIRE(projects.ok());
    CHECK(projects->size() == 1);
    const auto tasks =
        run<std::vector<api::BoincTask>>(server, [](BoincRpc& rpc, auto done) { rpc.getResults(done); });
    REQUIRE(tasks.ok());
    const auto transfers = run<std::vector<api::BoincTransfer>>(
        server, [](BoincRpc& rpc, auto done) { rpc.getFileTransfers(done); });
    REQUIRE(transfers.ok());
    const auto notices = run<NoticeBatch>(server, [](BoincRpc& rpc, auto done) { rpc.getNotices(0, done); });
    REQUIRE(notices.ok());
    CHECK(notices->notices.size() == 1);
    const auto messages =
        run<MessageBatch>(server, [](BoincRpc& rpc, auto done) { rpc.getMessages(50, done); });
    REQUIRE(messages.ok());
    CHECK(messages->lastSeqno == 52);
    const auto override =
        run<std::string>(server, [](BoincRpc& rpc, auto done) { rpc.getGlobalPrefsOverride(done); });
    REQUIRE(override.ok());
    CHECK_THAT(*override, Catch::StartsWith("<global_preferences>"));

    // Each run signs in on a connection of its own.
    std::vector<std::string> sent;
    const auto requests = server.requests();
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (requestName(requests[i]) != "auth1" && requestName(requests[i]) != "auth2") {
            sent.push_back(requests[i]);
        }
    }
    CHECK(sent == std::vector<std::string>{"<get_cc_status/>\n", "<get_project_status/>\n",
                                           "<get_results>\n  <active_only>0</active_only>\n</get_results>\n",
                                           "<get_file_transfers/>\n",
                                           "<get_notices>\n  <seqno>0</seqno>\n</get_notices>\n",
                                           "<get_messages>\n  <seqno>50</seqno>\n</get_messages>\n",
                                           "<get_global_prefs_override/>\n"});
}

TEST_CASE("BoincRpc: a parse error and a connection error both reach the callback", "[BoincRpc]") {
    FakeGuiRpcServer server(
        FakeGuiRpcServer::standard(kPassword, {{"get_cc_status", wrapReply("<cc_status>")}}));
    const auto broken = run<CcStatus>(server, [](BoincRpc& rpc, auto done) { rpc.getCcStatus(done); });
    REQUIRE_FALSE(broken.ok());
    CHECK_THAT(broken.error().message,
               Catch::StartsWith("BOINC's reply to get_cc_status is not well-formed XML"));

    FakeGuiRpcServer refusing(FakeGuiRpcServer::standard("another password", {}));
    const auto refused = run<CcStatus>(refusing, [](BoincRpc& rpc, auto done) { rpc.getCcStatus(done); });
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("refused nicer's password"));
}

TEST_CASE("BoincRpc writes the override and has the client read it", "[BoincRpc]") {
    SECTION("both succeed") {
        FakeGuiRpcServer server(FakeGuiRpcServer::standard(
            kPassword, {{"set_global_prefs_override", recordedReply("own-set_global_prefs_override.xml")},
                        {"read_global_prefs_override", kSuccess}}));
        const auto set = run<void>(server, [](BoincRpc& rpc, auto done) {
            rpc.setGlobalPrefsOverride("<global_preferences>\n</global_preferences>\n", done);
        });
        CHECK(set.ok());
        CHECK(calls(server) ==
              std::vector<std::string>{
                  "<set_global_prefs_override>\n<global_preferences>\n</global_preferences>\n"
                  "\n</set_global_prefs_override>\n",
                  "<read_global_prefs_override/>\n"});
    }
    SECTION("a refused write is the answer, even though the re-read succeeds") {
        FakeGuiRpcServer server(FakeGuiRpcServer::standard(
            kPassword, {{"set_global_prefs_override", wrapReply("<status>-108</status>")},
                        {"read_global_prefs_override", kSuccess}}));
        const auto set =
            run<void>(server, [](BoincRpc& rpc, auto done) { rpc.setGlobalPrefsOverride("", done); });
        REQUIRE_FALSE(set.ok());
        CHECK(set.error().message ==
              "BOINC's reply to set_global_prefs_override is a failure: BOINC error -108");
    }
    SECTION("a failed re-read") {
        FakeGuiRpcServer server(
            FakeGuiRpcServer::standard(kPassword, {{"set_global_prefs_override", kSuccess}}));
        const auto set =
            run<void>(server, [](BoincRpc& rpc, auto done) { rpc.setGlobalPrefsOverride("", done); });
        REQUIRE_FALSE(set.ok());
        CHECK(set.error().message == "BOINC's reply to read_global_prefs_override is an error: unrecognized "
                                     "op: read_global_prefs_override");
    }
}

TEST_CASE("BoincRpc's project and account manager operations escape their values", "[BoincRpc]") {
    FakeGuiRpcServer server(FakeGuiRpcServer::standard(
        kPassword, {{"project_attach", kSuccess},
                    {"project_attach_poll", recordedReply("own-project_attach_poll-done.xml")},
                    {"acct_mgr_rpc", recordedReply("own-acct_mgr_rpc.xml")},
                    {"acct_mgr_rpc_poll", recordedReply("own-acct_mgr_rpc_poll-in-progress.xml")},
                    {"project_detach", recordedReply("own-project_detach-no-such-project.xml")},
                    {"project_update", kSuccess},
                    {"quit", kSuccess}}));
    CHECK(run<void>(server, [](BoincRpc& rpc, auto done) {
              rpc.projectAttach("https://example.org/p/?a=1&b=2", "k<e>y", "Tom & Jerry's", done);
          }).ok());
    const auto attached =
        run<OperationPoll>(server, [](BoincRpc& rpc, auto done) { rpc.projectAttachPoll(done); });
    REQUIRE(attached.ok());
    CHECK(attached->succeeded());
    CHECK(run<void>(server, [](BoincRpc& rpc, auto done) {
              rpc.acctMgrRpc("https://bam.boincstats.com/", "me", "p&ss\"word", done);
          }).ok());
    const auto managed =
        run<OperationPoll>(server, [](BoincRpc& rpc, auto done) { rpc.acctMgrRpcPoll(done); });
    REQUIRE(managed.ok());
    CHECK(managed->inProgress());
    const auto detached = run<void>(
        server, [](BoincRpc& rpc, auto done) { rpc.projectDetach("http://127.0.0.1:1/none/", done); });
    REQUIRE_FALSE(detached.ok());
    CHECK(detached.error().message == "BOINC's reply to project_detach is an error: No such project");
    CHECK(run<void>(server, [](BoincRpc& rpc, auto done) { rpc.projectUpdate("http://a/", done); }).ok());
    CHECK(run<void>(server, [](BoincRpc& rpc, auto done) { rpc.quit(done); }).ok());

    std::vector<std::string> sent;
    for (const std::string& request : server.requests()) {
        if (requestName(request) != "auth1" && requestName(request) != "auth2") {
            sent.push_back(request);
        }
    }
    CHECK(sent ==
          std::vector<std::string>{
              "<project_attach>\n  <project_url>https://example.org/p/?a=1&amp;b=2</project_url>\n"
              "  <authenticator>k&lt;e&gt;y</authenticator>\n"
              "  <project_name>Tom &amp; Jerry&apos;s</project_name>\n</project_attach>\n",
              "<project_attach_poll/>\n",
              "<acct_mgr_rpc>\n  <url>https://bam.boincstats.com/</url>\n  <name>me</name>\n"
              "  <password>p&amp;ss&quot;word</password>\n</acct_mgr_rpc>\n",
              "<acct_mgr_rpc_poll/>\n",
              "<project_detach>\n  <project_url>http://127.0.0.1:1/none/</project_url>\n</project_detach>\n",
              "<project_update>\n  <project_url>http://a/</project_url>\n</project_update>\n", "<quit/>\n"});
}

namespace {

using test::TempDir;

// The real client, started by the test; killed if the test ends before it has exited.
class BoincProcess {
public:
    BoincProcess(const std::filesystem::path& directory, std::uint16_t port) {
        const std::string dir = directory.string();
        const std::string portText = std::to_string(port);
        const std::string log = (directory / "boinc.log").string();
        m_pid = ::fork();
        REQUIRE(m_pid >= 0);
        if (m_pid == 0) {
            const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (out >= 0) {
                ::dup2(out, STDOUT_FILENO);
                ::dup2(out, STDERR_FILENO);
            }
            ::execl("/usr/bin/boinc", "boinc", "--dir", dir.c_str(), "--gui_rpc_port", portText.c_str(),
                    static_cast<char*>(nullptr));
            ::_exit(127);
        }
    }
    ~BoincProcess() {
        if (m_pid > 0 && !exited()) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, nullptr, 0);
        }
    }
    BoincProcess(const BoincProcess&) = delete;
    BoincProcess& operator=(const BoincProcess&) = delete;

    bool exited() {
        if (m_exited) {
            return true;
        }
        m_exited = ::waitpid(m_pid, nullptr, WNOHANG) == m_pid;
        return m_exited;
    }

private:
    pid_t m_pid = -1;
    bool m_exited = false;
};

} // namespace

TEST_CASE("BoincRpc against the real BOINC client: status, the preferences override, quit",
          "[BoincRpc][real]") {
    if (!std::filesystem::exists("/usr/bin/boinc")) {
        NICER_SKIP("the BOINC client (/usr/bin/boinc, Debian's boinc-client) is not installed");
    }
    const TempDir dir;
    const std::uint16_t port = nicer::test::freeLoopbackPort();
    BoincProcess boinc(dir.path, port);
    const auto passwordFile = dir.path / "gui_rpc_auth.cfg";
    REQUIRE(test::pollUntil([&] { return std::filesystem::exists(passwordFile) || boinc.exited(); }, 30s));
    REQUIRE_FALSE(boinc.exited());
    const auto password = readGuiRpcPassword(passwordFile);
    REQUIRE(password.ok());

    auto loop = test::newLoop();
    auto client = GuiRpcClient::create(loop.get(), "127.0.0.1", port, *password);
    REQUIRE(client.ok());
    BoincRpc rpc(**client);

    // The client writes its password before it listens: ask until it answers.
    std::optional<Result<CcStatus>> status;
    test::pollUntil(
        [&] {
            status.reset();
            rpc.getCcStatus([&](Result<CcStatus> result) { status.emplace(std::move(result)); });
            REQUIRE(test::runLoopUntil(loop.get(), [&] { return status.has_value(); }));
            return status->ok() || boinc.exited();
        },
        30s, 200ms);
    INFO((status ? (status->ok() ? "ok" : status->error().message) : "no answer"));
    REQUIRE(status);
    REQUIRE(status->ok());
    CHECK((*status)->taskMode == RunMode::Auto);

    // A fresh client has no override; nicer's goes in, takes effect, and reads back as nicer's.
    const auto get = [&] {
        std::optional<Result<std::string>> text;
        rpc.getGlobalPrefsOverride([&](Result<std::string> result) { text.emplace(std::move(result)); });
        REQUIRE(test::runLoopUntil(loop.get(), [&] { return text.has_value(); }));
        REQUIRE(text->ok());
        return std::move(**text);
    };
    CHECK(get().empty());
    const auto nicer = withTransferLimits(withNicerSettings("").value(), 125000, 0);
    REQUIRE(nicer.ok());
    std::optional<Result<void>> set;
    rpc.setGlobalPrefsOverride(*nicer, [&](Result<void> result) { set.emplace(std::move(result)); });
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return set.has_value(); }));
    INFO((set->ok() ? "ok" : set->error().message));
    REQUIRE(set->ok());
    const std::string stored = get();
    CHECK(hasNicerSettings(stored));
    CHECK_THAT(stored, Catch::Contains("<max_bytes_sec_down>125000</max_bytes_sec_down>"));

    // Removing it: the client answers "no prefs override file" again.
    set.reset();
    rpc.setGlobalPrefsOverride("", [&](Result<void> result) { set.emplace(std::move(result)); });
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return set.has_value(); }));
    REQUIRE(set->ok());
    CHECK(get().empty());

    std::optional<Result<void>> quit;
    rpc.quit([&](Result<void> result) { quit.emplace(std::move(result)); });
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return quit.has_value(); }));
    CHECK(quit->ok());
    CHECK(test::pollUntil([&] { return boinc.exited(); }, 30s));
}
