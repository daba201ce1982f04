// GuiRpcClient on a real sd-event loop against FakeGuiRpcServer on 127.0.0.1, which replays replies
// recorded from the real client: signing in, order, timeouts, a server that closes or refuses, reconnects,
// and callbacks that call again or destroy the client.

#include "EventLoop.h"
#include "FreePort.h"
#include "boinc/FakeGuiRpcServer.h"
#include "boinc/GuiRpcClient.h"
#include "boinc/Replies.h"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <chrono>
#include <netinet/in.h>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

using namespace nicer;
using namespace nicer::boinc;
using nicer::test::FakeGuiRpcServer;
using nicer::test::recordedReply;
using namespace std::chrono_literals;

namespace {

constexpr const char* kClientPassword = "01ebc02d76430896d82f08c8a96adee";

std::unique_ptr<GuiRpcClient> clientFor(sd_event* event, std::uint16_t port,
                                        const std::string& password = kClientPassword) {
    auto client = GuiRpcClient::create(event, "127.0.0.1", port, password);
    REQUIRE(client.ok());
    return std::move(*client);
}

// What one call got; no REQUIRE in callbacks (they run inside the loop).
struct Outcome {
    std::optional<Result<std::string>> reply;
    bool done() const { return reply.has_value(); }
    GuiRpcClient::Callback callback() {
        return [this](Result<std::string> r) { reply = std::move(r); };
    }
    std::string error() const { return reply && !reply->ok() ? reply->error().message : "(no error)"; }
};

std::vector<std::string> requestNames(const FakeGuiRpcServer& server) {
    std::vector<std::string> names;
    for (const std::string& request : server.requests()) {
        names.push_back(requestName(request));
    }
    return names;
}

} // namespace

TEST_CASE("GuiRpcClient signs in with md5(nonce + password), then sends the call", "[GuiRpcClient]") {
    const std::string status = recordedReply("own-get_cc_status.xml");
    FakeGuiRpcServer server(FakeGuiRpcServer::standard(kClientPassword, {{"get_cc_status", status}}));
    auto loop = test::newLoop();
    auto client = clientFor(loop.get(), server.port());
    CHECK(client->endpoint() == "127.0.0.1:" + std::to_string(server.port()));
    CHECK_FALSE(client->connected());

    Outcome outcome;
    client->call("<get_cc_status/>\n", outcome.callback());
    CHECK_FALSE(outcome.done()); // never from inside call()
    CHECK(client->pendingCalls() == 1);
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return outcome.done(); }));
    REQUIRE(outcome.reply->ok());
    CHECK(**outcome.reply == status);
    CHECK(client->connected());
    CHECK(client->pendingCalls() == 0);

    const auto requests = server.requests();
    REQUIRE(requests.size() == 3);
    CHECK(requests[0] == "<auth1/>\n");
    CHECK(requests[1] == "<auth2>\n<nonce_hash>" +
                             authHash(FakeGuiRpcServer::kNonce, kClientPassword).value() +
                             "</nonce_hash>\n</auth2>\n");
    CHECK(requests[2] == "<get_cc_status/>\n");
}

TEST_CASE("GuiRpcClient runs queued calls one at a time, in order, on one connection", "[GuiRpcClient]") {
    FakeGuiRpcServer server(FakeGuiRpcServer::standard(
        kClientPassword, {{"get_cc_status", recordedReply("own-get_cc_status.xml")},
                          {"get_project_status", recordedReply("own-get_project_status.xml")},
                          {"get_notices", recordedReply("own-get_notices-empty.xml")}}));
    auto loop = test::newLoop();
    auto client = clientFor(loop.get(), server.port());
    std::vector<std::string> order;
    std::vector<Outcome> outcomes(3);
    const std::vector<std::string> bodies = {"<get_cc_status/>\n", "<get_project_status/>\n",
                                             "<get_notices>\n<seqno>0</seqno>\n</get_notices>\n"};
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        client->call(bodies[i], [&, i](Result<std::string> reply) {
            order.push_back(requestName(bodies[i]));
            outcomes[i].reply = std::move(reply);
        });
    }
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return order.size() == 3; }));
    CHECK(order == std::vector<std::string>{"get_cc_status", "get_project_status", "get_notices"});
    CHECK(**outcomes[1].reply == recordedReply("own-get_project_status.xml"));
    CHECK(requestNames(server) ==
          std::vector<std::string>{"auth1", "auth2", "get_cc_status", "get_project_status", "get_notices"});
    CHECK(server.connections() == 1);
}

TEST_CASE("GuiRpcClient: a refused password fails every pending call and says so", "[GuiRpcClient]") {
    FakeGuiRpcServer server(FakeGuiRpcServer::standard(kClientPassword, {}));
    auto loop = test::newLoop();
    auto client = clientFor(loop.get(), server.port(), "not the password");
    Outcome first;
    Outcome second;
    client->call("<get_cc_status/>\n", first.callback());
    client->call("<get_results/>\n", second.callback());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return first.done() && second.done(); }));
    const std::string expected = "BOINC's GUI RPC at " + client->endpoint() +
                                 " refused nicer's password (unauthorized): is it the one in the client's "
                                 "gui_rpc_auth.cfg?";
    CHECK(first.error() == expected);
    CHECK(second.error() == expected);
    CHECK_FALSE(client->connected());
    CHECK(requestNames(server) == std::vector<std::string>{"auth1", "auth2"});
}

TEST_CASE("GuiRpcClient: a refused connection says whether the client runs", "[GuiRpcClient]") {
    auto loop = test::newLoop();
    const std::uint16_t port = nicer::test::freeLoopbackPort();
    auto client = clientFor(loop.get(), port);
    Outcome outcome;
    client->call("<get_cc_status/>\n", outcome.callback());
    CHECK_FALSE(outcome.done());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return outcome.done(); }));
    CHECK(outcome.error() == "BOINC's GUI RPC at 127.0.0.1:" + std::to_string(port) +
                                 " refused the connection: is the client running?");
}

TEST_CASE("GuiRpcClient gives up on a reply that does not come", "[GuiRpcClient]") {
    SECTION("the call's reply") {
        auto handler = FakeGuiRpcServer::standard(kClientPassword, {});
        FakeGuiRpcServer server([&](const std::string& request, int connection) {
            return requestName(request) == "get_results" ? FakeGuiRpcServer::Answer::silence()
                                                         : handler(request, connection);
        });
        auto loop = test::newLoop();
        auto client = clientFor(loop.get(), server.port());
        client->setTimeout(200ms);
        Outcome outcome;
        client->call("<get_results>\n<active_only>0</active_only>\n</get_results>\n", outcome.callback());
        REQUIRE(test::runLoopUntil(loop.get(), [&] { return outcome.done(); }));
        CHECK(outcome.error() ==
              "BOINC's GUI RPC at " + client->endpoint() + " did not answer get_results within 0.2 s");
        CHECK_FALSE(client->connected());
    }
    SECTION("the sign-in") {
        FakeGuiRpcServer server([](const std::string&, int) { return FakeGuiRpcServer::Answer::silence(); });
        auto loop = test::newLoop();
        auto client = clientFor(loop.get(), server.port());
        client->setTimeout(200ms);
        Outcome outcome;
        client->call("<get_cc_status/>\n", outcome.callback());
        REQUIRE(test::runLoopUntil(loop.get(), [&] { return outcome.done(); }));
        CHECK(outcome.error() == "BOINC's GUI RPC at " + client->endpoint() +
                                     " did not answer the sign-in (auth1) within 0.2 s");
    }
}

TEST_CASE("GuiRpcClient: a server that closes in the middle of a reply", "[GuiRpcClient]") {
    const std::string results = recordedReply("own-get_project_status.xml");
    auto handler = FakeGuiRpcServer::standard(kClientPassword, {});
    FakeGuiRpcServer server([&](const std::string& request, int connection) {
        if (requestName(request) == "get_project_status") {
            return FakeGuiRpcServer::Answer{results.substr(0, results.size() / 2), true};
        }
        return handler(request, connection);
    });
    auto loop = test::newLoop();
    auto client = clientFor(loop.get(), server.port());
    Outcome outcome;
    client->call("<get_project_status/>\n", outcome.callback());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return outcome.done(); }));
    CHECK(outcome.error() == "BOINC's GUI RPC at " + client->endpoint() +
                                 " closed the connection before answering get_project_status (did the client "
                                 "exit, or refuse the request?)");
}

TEST_CASE("GuiRpcClient connects again for the call after a failure", "[GuiRpcClient]") {
    const std::string status = recordedReply("own-get_cc_status.xml");
    auto handler = FakeGuiRpcServer::standard(kClientPassword, {{"get_cc_status", status}});
    FakeGuiRpcServer server([&](const std::string& request, int connection) {
        if (connection == 1 && requestName(request) == "get_cc_status") {
            return FakeGuiRpcServer::Answer{"<boinc_gui_rpc_reply>\n<cc_", true}; // then gone
        }
        return handler(request, connection);
    });
    auto loop = test::newLoop();
    auto client = clientFor(loop.get(), server.port());
    Outcome failed;
    client->call("<get_cc_status/>\n", failed.callback());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return failed.done(); }));
    CHECK_FALSE(failed.reply->ok());

    Outcome again;
    client->call("<get_cc_status/>\n", again.callback());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return again.done(); }));
    REQUIRE(again.reply->ok());
    CHECK(**again.reply == status);
    CHECK(server.connections() == 2);
    CHECK(requestNames(server) ==
          std::vector<std::string>{"auth1", "auth2", "get_cc_status", "auth1", "auth2", "get_cc_status"});
}

TEST_CASE("GuiRpcClient: the client closing between calls is no error, the next call reconnects",
          "[GuiRpcClient]") {
    auto handler = FakeGuiRpcServer::standard(kClientPassword, {});
    FakeGuiRpcServer server([&](const std::string& request, int connection) {
        if (requestName(request) == "quit") {
            auto answer =
                FakeGuiRpcServer::Answer::reply(recordedReply("own-project_attach.xml")); // <success/>
            answer.close = true;
            return answer;
        }
        return handler(request, connection);
    });
    auto loop = test::newLoop();
    auto client = clientFor(loop.get(), server.port());
    Outcome quit;
    client->call("<quit/>\n", quit.callback());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return quit.done(); }));
    REQUIRE(quit.reply->ok());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return !client->connected(); }));

    Outcome next;
    client->call("<quit/>\n", next.callback());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return next.done(); }));
    CHECK(next.reply->ok());
    CHECK(server.connections() == 2);
}

TEST_CASE("GuiRpcClient refuses a reply larger than 16 MiB", "[GuiRpcClient]") {
    auto handler = FakeGuiRpcServer::standard(kClientPassword, {});
    FakeGuiRpcServer server([&](const std::string& request, int connection) {
        if (requestName(request) == "get_messages") {
            return FakeGuiRpcServer::Answer{std::string(kMaxReplyBytes + 1, 'x'), false};
        }
        return handler(request, connection);
    });
    auto loop = test::newLoop();
    auto client = clientFor(loop.get(), server.port());
    Outcome outcome;
    client->call("<get_messages>\n<seqno>0</seqno>\n</get_messages>\n", outcome.callback());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return outcome.done(); }));
    CHECK(outcome.error() == "BOINC's GUI RPC at " + client->endpoint() +
                                 " sent a reply to get_messages larger than 16 MiB; nicer gives up on it");
}

TEST_CASE("GuiRpcClient refuses a request larger than the client reads, without sending it",
          "[GuiRpcClient]") {
    FakeGuiRpcServer server(FakeGuiRpcServer::standard(kClientPassword, {}));
    auto loop = test::newLoop();
    auto client = clientFor(loop.get(), server.port());
    Outcome outcome;
    client->call("<set_global_prefs_override>\n" + std::string(kMaxRequestBytes, ' ') +
                     "</set_global_prefs_override>\n",
                 outcome.callback());
    CHECK_FALSE(outcome.done());
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return outcome.done(); }));
    CHECK_THAT(outcome.error(), Catch::StartsWith("BOINC's GUI RPC at " + client->endpoint() +
                                                  " cannot take set_global_prefs_override: the request is "));
    CHECK(server.requests().empty());
}

TEST_CASE("GuiRpcClient: a callback may call again", "[GuiRpcClient]") {
    FakeGuiRpcServer server(FakeGuiRpcServer::standard(
        kClientPassword, {{"get_cc_status", recordedReply("own-get_cc_status.xml")}}));
    auto loop = test::newLoop();
    auto client = clientFor(loop.get(), server.port());
    Outcome second;
    bool firstDone = false;
    client->call("<get_cc_status/>\n", [&](Result<std::string> reply) {
        firstDone = reply.ok();
        client->call("<get_cc_status/>\n", second.callback());
    });
    REQUIRE(test::runLoopUntil(loop.get(), [&] { return second.done(); }));
    CHECK(firstDone);
    CHECK(second.reply->ok());
}

TEST_CASE("GuiRpcClient: a callback may destroy the client, the calls left are dropped", "[GuiRpcClient]") {
    auto loop = test::newLoop();
    SECTION("on a reply") {
        FakeGuiRpcServer server(FakeGuiRpcServer::standard(
            kClientPassword, {{"get_cc_status", recordedReply("own-get_cc_status.xml")}}));
        auto client = clientFor(loop.get(), server.port());
        int calls = 0;
        client->call("<get_cc_status/>\n", [&](Result<std::string>) {
            ++calls;
            client.reset();
        });
        client->call("<get_cc_status/>\n", [&](Result<std::string>) { ++calls; });
        REQUIRE(test::runLoopUntil(loop.get(), [&] { return client == nullptr; }));
        test::runLoopUntil(
            loop.get(), [] { return false; }, 100ms); // nothing more may happen
        CHECK(calls == 1);
    }
    SECTION("on a failure that fails several calls") {
        auto client = clientFor(loop.get(), nicer::test::freeLoopbackPort());
        int calls = 0;
        for (int i = 0; i < 3; ++i) {
            client->call("<get_cc_status/>\n", [&](Result<std::string> reply) {
                ++calls;
                CHECK_FALSE(reply.ok());
                client.reset();
            });
        }
        REQUIRE(test::runLoopUntil(loop.get(), [&] { return client == nullptr; }));
        test::runLoopUntil(
            loop.get(), [] { return false; }, 100ms);
        CHECK(calls == 1);
    }
}

TEST_CASE("GuiRpcClient takes IP addresses and localhost, and refuses names it would have to look up",
          "[GuiRpcClient]") {
    auto loop = test::newLoop();
    CHECK(GuiRpcClient::create(loop.get(), "localhost", 31416, "")->get()->endpoint() == "127.0.0.1:31416");
    CHECK(GuiRpcClient::create(loop.get(), "::1", 31416, "")->get()->endpoint() == "[::1]:31416");
    CHECK(GuiRpcClient::create(loop.get(), "[::1]", 31416, "")->get()->endpoint() == "[::1]:31416");

    const auto name = GuiRpcClient::create(loop.get(), "boinc.example.org", 31416, "");
    REQUIRE_FALSE(name.ok());
    CHECK(name.error().message ==
          "cannot reach BOINC's GUI RPC at 'boinc.example.org': give an IP address or "
          "localhost (a host name would need a lookup that blocks)");
    const auto port = GuiRpcClient::create(loop.get(), "127.0.0.1", 0, "");
    REQUIRE_FALSE(port.ok());
}
